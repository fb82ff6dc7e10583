package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-apex/git-apex/docs/schema"
)

// schemas are docs/schema's shapes, loaded once as OpenAPI components
// (kin-openapi validates JSON against them).
var schemas = sync.OnceValues(func() (openapi3.Schemas, error) {
	comps, err := schema.Components()
	if err != nil {
		return nil, err
	}
	doc, err := json.Marshal(map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "git-apex", "version": "1"},
		"paths": map[string]any{}, "components": map[string]any{"schemas": comps}})
	if err != nil {
		return nil, err
	}
	loaded, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return nil, err
	}
	return loaded.Components.Schemas, nil
})

// cmdSchema checks the last command's stdout against a shape of
// docs/schema: one value, an array of them (-array) or one per line
// (-lines). Unknown fields are errors: every shape forbids them.
//
//	schema env
//	schema -array event
//	schema -lines batch-result
func cmdSchema(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 || len(args) > 2 {
		ts.Fatalf("usage: schema [-array|-lines] SHAPE")
	}
	form, name := "", args[len(args)-1]
	if len(args) == 2 {
		form = args[0]
	}
	all, err := schemas()
	ts.Check(err)
	data, err := schema.Shape(name)
	ts.Check(err)
	var head struct{ Title string }
	ts.Check(json.Unmarshal(data, &head))
	s := all[head.Title].Value
	out := ts.ReadFile("stdout")
	var values []any
	switch form {
	case "-lines":
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v any
			ts.Check(json.Unmarshal([]byte(line), &v))
			values = append(values, v)
		}
	case "-array":
		ts.Check(json.Unmarshal([]byte(out), &values))
	case "":
		var v any
		ts.Check(json.Unmarshal([]byte(out), &v))
		values = []any{v}
	default:
		ts.Fatalf("usage: schema [-array|-lines] SHAPE")
	}
	if len(values) == 0 {
		ts.Fatalf("no %s to check in stdout", name)
	}
	for _, v := range values {
		if err := s.VisitJSON(v); err != nil {
			pretty, _ := json.MarshalIndent(v, "", "  ")
			ts.Fatalf("stdout does not match docs/schema/%s.json: %v\n%s", name, err, bytes.TrimSpace(pretty))
		}
	}
}
