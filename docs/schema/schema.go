// Package schema holds the JSON Schema of every JSON shape git-apex
// prints (one file per shape, docs/schema/<shape>.json): the one
// vocabulary of the command line's --json, the HTTP API and MCP. The API's
// OpenAPI document takes its shared shapes from here (Components).
package schema

import (
	"embed"
	"encoding/json"
	"io/fs"
	"strings"
)

//go:embed *.json
var files embed.FS

// Shape is the schema of one shape, by its file's name without ".json".
func Shape(name string) ([]byte, error) { return files.ReadFile(name + ".json") }

// Components is every shape as an OpenAPI component, keyed by its title:
// references to another file become references to its component, and
// "$schema" goes.
func Components() (map[string]any, error) {
	titles := map[string]string{}
	shapes := map[string]map[string]any{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		delete(s, "$schema")
		titles[name] = s["title"].(string)
		shapes[name] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name, s := range shapes {
		out[titles[name]] = rewriteRefs(s, titles)
	}
	return out, nil
}

// rewriteRefs points "$ref": "<file>.json" at the file's component.
func rewriteRefs(v any, titles map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if ref, ok := sub.(string); ok && k == "$ref" && strings.HasSuffix(ref, ".json") {
				v[k] = "#/components/schemas/" + titles[ref]
			} else {
				v[k] = rewriteRefs(sub, titles)
			}
		}
	case []any:
		for i, sub := range v {
			v[i] = rewriteRefs(sub, titles)
		}
	}
	return v
}
