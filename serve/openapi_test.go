package serve

import (
	"testing"
)

// Every operation has an operationId of its own, or a generated client
// invents the names of its calls; and the document says where the server
// is and under what licence.
func TestOpenAPIOperationIDs(t *testing.T) {
	t.Parallel()
	doc := OpenAPI()
	seen := map[string]string{}
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("no paths")
	}
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			where := method + " " + path
			id, _ := op.(map[string]any)["operationId"].(string)
			if id == "" {
				t.Errorf("%s has no operationId", where)
				continue
			}
			if other, ok := seen[id]; ok {
				t.Errorf("%s and %s share operationId %q", where, other, id)
			}
			seen[id] = where
		}
	}
	if servers, _ := doc["servers"].([]any); len(servers) == 0 {
		t.Error("no servers")
	}
	if info, _ := doc["info"].(map[string]any); info["license"] == nil {
		t.Error("no info.license")
	}
}
