// Package api holds the HTTP contract of the service, api/openapi.yaml, so
// that the server can serve the document it was built with.
package api

import _ "embed"

// OpenAPI is api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
