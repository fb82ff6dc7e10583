package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/git-apex/git-apex/docs/schema"
)

// openAPIDoc is the OpenAPI 3.1 document of the server's endpoints, less
// the shapes it shares with the command line, which come from package
// schema (docs/schema). The tests validate every answer they get against
// the whole.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI document, with the shared shapes in.
var OpenAPI = sync.OnceValue(func() []byte {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		panic("api/openapi.json: " + err.Error())
	}
	shared, err := schema.Components()
	if err != nil {
		panic("docs/schema: " + err.Error())
	}
	own := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, s := range shared {
		own[name] = s
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
})

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(OpenAPI())
}
