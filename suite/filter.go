package suite

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Filter selects runs by --filter EXPR: comma-separated terms, each a glob
// matched against the scenario's name, its file's base name or one of its
// tags; a term starting with '!' excludes what it matches. A run is kept
// when it matches some plain term (or there is none) and no excluding one.
type Filter struct {
	include, exclude []string
}

// ParseFilter reads a --filter expression.
func ParseFilter(expr string) (Filter, error) {
	var f Filter
	if strings.TrimSpace(expr) == "" {
		return f, nil
	}
	for _, term := range strings.Split(expr, ",") {
		term = strings.TrimSpace(term)
		neg := strings.HasPrefix(term, "!")
		term = strings.TrimPrefix(term, "!")
		if term == "" {
			return f, fmt.Errorf("--filter %q: an empty term", expr)
		}
		if _, err := path.Match(term, ""); err != nil {
			return f, fmt.Errorf("--filter %q: bad pattern %q: %w", expr, term, err)
		}
		if neg {
			f.exclude = append(f.exclude, term)
		} else {
			f.include = append(f.include, term)
		}
	}
	return f, nil
}

func (f Filter) match(name, file string, tags []string) bool {
	subjects := append([]string{name, filepath.Base(file)}, tags...)
	any := func(terms []string) bool {
		for _, t := range terms {
			for _, s := range subjects {
				if ok, _ := path.Match(t, s); ok {
					return true
				}
			}
		}
		return false
	}
	if any(f.exclude) {
		return false
	}
	return len(f.include) == 0 || any(f.include)
}
