package model

import (
	"encoding/json"
	"maps"
)

// flattenUsage collects every numeric field of a usage object, nested
// objects becoming dotted keys. Nil or non-object usage gives an empty map.
func flattenUsage(raw json.RawMessage) map[string]float64 {
	out := map[string]float64{}
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case float64:
			if prefix != "" {
				out[prefix] = v
			}
		case map[string]any:
			for k, child := range v {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, child)
			}
		}
	}
	walk("", v)
	return out
}

// AddUsage adds every field of usage into total, creating total when nil,
// and returns it. The report sums usage this way across a run.
func AddUsage(total, usage map[string]float64) map[string]float64 {
	if total == nil {
		total = make(map[string]float64, len(usage))
	}
	for k, v := range maps.All(usage) {
		total[k] += v
	}
	return total
}
