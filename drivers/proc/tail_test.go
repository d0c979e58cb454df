package proc

import (
	"fmt"
	"testing"
)

func TestTailKeepsTheEnd(t *testing.T) {
	t.Parallel()
	tail := NewTail(8)
	for i := range 5 {
		fmt.Fprintf(tail, "line%d\n", i)
	}
	if got := tail.String(); got != "3\nline4" {
		t.Errorf("tail = %q, want the last 8 bytes trimmed", got)
	}
}
