package scenarios

// goalNeedsModel is the problem of a goal scenario without a model
// endpoint, which a session does not have.
const goalNeedsModel = "a goal scenario needs a model: set " + EnvVisionEndpoint + " or model.endpoint in the operator file"

// sessionNeedsGoal is the problem of a session's scenario without a goal.
const sessionNeedsGoal = "a session's scenario needs a goal, what the agent is asked to do; steps are run by `kasmrt run`"

// LoadSession reads and validates a scenario for a session, whose calls
// come from an outside agent: it is LoadChecked, except that a goal needs
// no model, since the agent pursues it. The scenario must have a goal
// (what the agent is asked to do); steps are for `kasmrt run`. A missing
// goal is reported with every other problem, not instead of them.
func LoadSession(scenarioPath, operatorPath string, lookup Lookup, checks ...Check) (*Files, error) {
	return load(scenarioPath, operatorPath, lookup, loadSession, checks...)
}
