package suite

import (
	"sort"

	"github.com/kasmrt/kasmrt/engine/capacity"
)

// planGates makes the capacity gates every run of the plan shares: one
// semaphore per services group, so max_concurrent bounds the suite's
// requests in this process, not each run's. Runs whose operator files
// bound one group differently are refused before any starts.
func planGates(plan *Plan) (*capacity.Gates, error) {
	gates := new(capacity.Gates)
	for _, p := range plan.Runs {
		op := p.Files.Operator
		limits := op.ServiceLimits()
		names := make([]string, 0, len(limits))
		for name := range limits {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			key := "services." + name + ".max_concurrent"
			if have := gates.Limit(name); have != 0 && have != limits[name] {
				return nil, badInput("%s: %s: %d here, but another run of the suite bounds %s to %d; the runs share each group's bound, so their operator files must agree", op.KeyPos(key), key, limits[name], name, have)
			}
			if err := gates.Bound(name, limits[name]); err != nil {
				return nil, badInput("%s: %s: %v", op.KeyPos(key), key, err)
			}
		}
	}
	return gates, nil
}
