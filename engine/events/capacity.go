package events

// Event kinds of the capacity gates (services.<group>.max_concurrent).
const (
	// KindCapacityWait is a request that found every slot of its group
	// taken and is waiting for one. CapacityWait.
	KindCapacityWait Kind = "capacity.wait"
	// KindCapacityAcquired is that request holding a slot at last.
	// CapacityAcquired.
	KindCapacityAcquired Kind = "capacity.acquired"
)

// CapacityWait is capacity.wait's payload; the event's Message says what
// waits.
type CapacityWait struct {
	Group string `json:"group"`
	Limit int    `json:"limit"`
	// For is what the request is for: "model" or the declared tool's name.
	For string `json:"for"`
}

// CapacityAcquired is capacity.acquired's payload.
type CapacityAcquired struct {
	Group    string `json:"group"`
	Limit    int    `json:"limit"`
	For      string `json:"for"`
	WaitedMS int64  `json:"waited_ms"`
}

func (CapacityWait) Kind() Kind     { return KindCapacityWait }
func (CapacityAcquired) Kind() Kind { return KindCapacityAcquired }

func (p CapacityWait) redacted(r func(string) string) Payload {
	p.Group, p.For = r(p.Group), r(p.For)
	return p
}

func (p CapacityAcquired) redacted(r func(string) string) Payload {
	p.Group, p.For = r(p.Group), r(p.For)
	return p
}
