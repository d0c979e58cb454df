package serve

import (
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/inbox"
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

// The answer routes document the operator's mark: the request takes it
// as an enum of the inbox's marks, private by default, and the recorded
// answer says which it got.
func TestOpenAPIAnswerMark(t *testing.T) {
	t.Parallel()
	paths := OpenAPI()["paths"].(map[string]any)
	for _, kind := range []string{"runs", "sessions"} {
		post := paths["/v1/"+kind+"/{id}/questions/{qid}/answer"].(map[string]any)["post"].(map[string]any)
		body := post["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		mark, _ := body["properties"].(map[string]any)["mark"].(map[string]any)
		if mark == nil || !slices.Equal(mark["enum"].([]inbox.Mark), inbox.Marks()) || mark["default"] != inbox.MarkPrivate || mark["description"] == "" {
			t.Errorf("%s: the answer's mark is %v, want an enum of %v, private by default, described", kind, mark, inbox.Marks())
		}
		ok := post["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		if !slices.Contains(ok["required"].([]string), "mark") {
			t.Errorf("%s: the recorded answer does not say its mark: %v", kind, ok)
		}
	}
}
