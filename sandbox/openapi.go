package sandbox

import _ "embed"

// openapiYAML is the interface description served at /v1/openapi.yaml.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the embedded OpenAPI 3.1 document.
func OpenAPI() []byte { return append([]byte(nil), openapiYAML...) }
