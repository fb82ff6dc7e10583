// Package schema holds the JSON Schema of every JSON shape git-apex
// prints (one file per shape, docs/schema/<shape>.json): the one
// vocabulary of the command line's --json, the HTTP API and MCP. The API's
// OpenAPI document takes its shared shapes from here (Components), and
// MCP its tools' schemas (Tool: docs/schema/mcp/<tool>.json, whose input
// and output refer to the shapes).
package schema

import (
	"embed"
	"encoding/json"
	"io/fs"
	"strings"
)

//go:embed *.json mcp/*.json
var files embed.FS

// Shape is the schema of one shape, by its file's name without ".json".
func Shape(name string) ([]byte, error) { return files.ReadFile(name + ".json") }

// shapes reads every shape afresh, keyed by its file's name, less its
// "$schema", and the title of each file.
func shapes() (map[string]map[string]any, map[string]string, error) {
	titles := map[string]string{}
	out := map[string]map[string]any{}
	entries, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, nil, err
	}
	for _, name := range entries {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, nil, err
		}
		delete(s, "$schema")
		titles[name] = s["title"].(string)
		out[name] = s
	}
	return out, titles, nil
}

// Components is every shape as an OpenAPI component, keyed by its title:
// references to another file become references to its component, and
// "$schema" goes.
func Components() (map[string]any, error) {
	all, titles, err := shapes()
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for name, s := range all {
		out[titles[name]] = rewriteRefs(s, "#/components/schemas/", titles, nil)
	}
	return out, nil
}

// Tool is the input and output schemas of an MCP tool, each whole: the
// shapes they refer to are in its "$defs", by title. An output that is
// only a reference to a shape is that shape (MCP wants an object).
func Tool(name string) (input, output map[string]any, err error) {
	data, err := files.ReadFile("mcp/" + name + ".json")
	if err != nil {
		return nil, nil, err
	}
	var doc struct{ Input, Output map[string]any }
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	all, titles, err := shapes()
	if err != nil {
		return nil, nil, err
	}
	files := map[string]string{} // by title
	for file, title := range titles {
		files[title] = file
	}
	if ref, ok := doc.Output["$ref"].(string); ok && len(doc.Output) == 1 {
		doc.Output = all[strings.TrimPrefix(ref, "../")]
	}
	for _, s := range []map[string]any{doc.Input, doc.Output} {
		used := map[string]bool{}
		rewriteRefs(s, "#/$defs/", titles, used)
		defs := map[string]any{}
		for len(used) > len(defs) {
			for title := range used {
				if defs[title] == nil {
					defs[title] = rewriteRefs(all[files[title]], "#/$defs/", titles, used)
				}
			}
		}
		if len(defs) > 0 {
			s["$defs"] = defs
		}
	}
	return doc.Input, doc.Output, nil
}

// rewriteRefs points "$ref": "<file>.json" (from mcp/, "../<file>.json")
// at the file's title under prefix, adding the title to used when used
// is not nil.
func rewriteRefs(v any, prefix string, titles map[string]string, used map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			ref, ok := sub.(string)
			if !ok || k != "$ref" {
				v[k] = rewriteRefs(sub, prefix, titles, used)
				continue
			}
			if title, isShape := titles[strings.TrimPrefix(ref, "../")]; isShape {
				v[k] = prefix + title
				if used != nil {
					used[title] = true
				}
			}
		}
	case []any:
		for i, sub := range v {
			v[i] = rewriteRefs(sub, prefix, titles, used)
		}
	}
	return v
}
