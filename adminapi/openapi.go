package adminapi

import _ "embed"

// OpenAPI is the admin API's OpenAPI 3.1 document, served at PathOpenAPI.
// A test holds it to the endpoint table, and the binary's test calls
// every endpoint and validates each answer against it: a key added to an
// answer must be added here.
//
//go:embed openapi.json
var OpenAPI []byte

// openAPI serves OpenAPI. It describes the API and holds no secret, so
// it needs no key.
func (a *API) openAPI(c *call) error {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Header().Set("Cache-Control", "no-cache")
	_, err := c.w.Write(OpenAPI)
	return err
}
