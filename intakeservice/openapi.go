package intakeservice

import _ "embed"

// openapiYAML is the contract: the service's OpenAPI 3.1 document, which the
// sandbox serves at /v1/openapi.yaml.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI returns the OpenAPI 3.1 document (a copy).
func OpenAPI() []byte { return append([]byte(nil), openapiYAML...) }
