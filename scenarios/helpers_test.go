package scenarios

import (
	"encoding/json"
	"fmt"
	"testing"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fmtV(v any) string { return fmt.Sprintf("%+v", v) }
