package scenarios

// goalNeedsModel is the problem of a goal scenario without a model
// endpoint, which a session does not have.
const goalNeedsModel = "a goal scenario needs a model: set " + EnvVisionEndpoint + " or model.endpoint in the operator file"

// LoadSession reads and validates a scenario for a session, whose calls
// come from an outside agent: it is Load, except that a goal needs no
// model, since the agent pursues it. The scenario must have a goal (what
// the agent is asked to do); steps are for `kasmrt run`.
func LoadSession(scenarioPath, operatorPath string, lookup Lookup) (*Files, error) {
	files, err := load(scenarioPath, operatorPath, lookup, true)
	if err != nil {
		return nil, err
	}
	if files.Scenario.Goal == "" {
		p := files.Scenario.KeyPos("steps")
		return nil, Problems{{Pos: p, Msg: "a session's scenario needs a goal, what the agent is asked to do; steps are run by `kasmrt run`"}}
	}
	return files, nil
}
