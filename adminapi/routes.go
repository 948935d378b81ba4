package adminapi

// Paths of the admin API, documented in openapi.json.
const (
	PathOpenAPI   = "/v1/custody/openapi.json"
	PathRecords   = "/v1/custody/records"
	PathEvents    = "/v1/custody/events"
	PathStats     = "/v1/custody/stats"
	PathBreakdown = "/v1/custody/breakdown"
	PathContract  = "/v1/custody/contract"
	PathLogStatus = "/v1/custody/log"
	PathCanaries  = "/v1/custody/canaries"
	PathReenroll  = "/v1/custody/canaries/reenroll"
	PathEvals     = "/v1/custody/evals"
	PathEvalsRun  = "/v1/custody/evals/run"
	PathReceipt   = "/v1/custody/receipts/{request_id}"
	// PathLog is the prefix of the log's public tiles and checkpoint (the
	// tlog-tiles layout, not JSON: not in openapi.json).
	PathLog = "/log/"
)

// Auth is who may call an endpoint.
type Auth int

const (
	AuthNone   Auth = iota // public: it holds no secret
	AuthAdmin              // an admin key
	AuthTenant             // a tenant key; the endpoint answers for that tenant only
)

func (a Auth) String() string {
	return [...]string{"none", "admin", "tenant"}[a]
}

// Endpoint is one endpoint of the API.
type Endpoint struct {
	Method string
	Path   string // a ServeMux pattern's path
	Auth   Auth
	// InProcess: the console reads it through API.InProcess.
	InProcess bool
	// Documented: in openapi.json (every /v1/custody/ endpoint).
	Documented bool
	serve      func(*API, *call) error
}

// endpoints is the one table of the API: Mounts and InProcess route by
// it, serve authenticates by it, and a test holds openapi.json to it.
var endpoints = []Endpoint{
	{"GET", PathOpenAPI, AuthNone, false, true, (*API).openAPI},
	{"GET", PathRecords, AuthAdmin, true, true, (*API).records},
	{"GET", PathEvents, AuthAdmin, true, true, (*API).events},
	{"GET", PathStats, AuthAdmin, true, true, (*API).stats},
	{"GET", PathBreakdown, AuthAdmin, true, true, (*API).breakdown},
	{"GET", PathContract, AuthAdmin, true, true, (*API).contract},
	{"GET", PathLogStatus, AuthAdmin, true, true, (*API).logStatus},
	{"GET", PathCanaries, AuthAdmin, true, true, (*API).canaryStatus},
	{"POST", PathReenroll, AuthAdmin, false, true, (*API).reenroll},
	{"GET", PathEvals, AuthAdmin, true, true, (*API).evalStatus},
	{"POST", PathEvalsRun, AuthAdmin, false, true, (*API).evalRun},
	{"GET", PathReceipt, AuthTenant, false, true, (*API).receipt},
	{"GET", PathLog, AuthNone, false, false, (*API).logTiles},
}

// Endpoints lists the API's endpoints (for tests and docs).
func Endpoints() []Endpoint {
	out := make([]Endpoint, len(endpoints))
	copy(out, endpoints)
	return out
}
