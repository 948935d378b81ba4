package gateway

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the admin API's OpenAPI 3.1 document, served at PathOpenAPI.
// A test calls every admin endpoint of a running gateway and validates
// each answer against it: a key added to an answer must be added here.
//
//go:embed openapi.json
var OpenAPI []byte

// serveOpenAPI serves OpenAPI. It describes the API and holds no secret,
// so it needs no key.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(OpenAPI)
}
