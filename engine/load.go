package engine

import "github.com/kasmrt/kasmrt/scenarios"

// Load reads and validates a scenario and an operator file as
// scenarios.Load does, and checks them as Check does: what the loader
// finds and what only the drivers can tell (a press_key chord X has no
// key for) are reported together, as Problems, rather than one kind
// hiding the other until it is fixed.
func Load(scenarioPath, operatorPath string, lookup scenarios.Lookup) (*scenarios.Files, error) {
	files, err := scenarios.LoadChecked(scenarioPath, operatorPath, lookup, checkKeyNames)
	if err != nil {
		return nil, err
	}
	if err := Check(files); err != nil {
		return nil, err
	}
	return files, nil
}

// LoadSession is Load for a session, whose goal an outside agent pursues
// (scenarios.LoadSession): the same checks, reported together.
func LoadSession(scenarioPath, operatorPath string, lookup scenarios.Lookup) (*scenarios.Files, error) {
	files, err := scenarios.LoadSession(scenarioPath, operatorPath, lookup, checkKeyNames)
	if err != nil {
		return nil, err
	}
	if err := Check(files); err != nil {
		return nil, err
	}
	return files, nil
}
