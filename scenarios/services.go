package scenarios

import "regexp"

// Capacity groups (docs/language.md, "services").
const (
	// DefaultModelService is the capacity group of the model endpoint
	// when model.service does not name another.
	DefaultModelService = "model"
	// MaxConcurrentLimit bounds services.<group>.max_concurrent.
	MaxConcurrentLimit = 1000
)

// ServiceConfig bounds one capacity group: the requests of every run in
// this process to the backends of that group.
type ServiceConfig struct {
	Pos Pos `yaml:"-"`
	// MaxConcurrent is how many requests to the group may be in flight at
	// once; a request beyond it waits for one to finish.
	MaxConcurrent int `yaml:"max_concurrent"`
}

var serviceNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// ModelService is the capacity group of the model endpoint.
func (o *Operator) ModelService() string {
	if o.Model.Service == "" {
		return DefaultModelService
	}
	return o.Model.Service
}

// ServiceLimits returns each bounded group's max_concurrent.
func (o *Operator) ServiceLimits() map[string]int {
	out := make(map[string]int, len(o.Services))
	for name, s := range o.Services {
		out[name] = s.MaxConcurrent
	}
	return out
}

// services checks the capacity groups and the model's group name.
func (v *validator) services(o *Operator) {
	for name, s := range o.Services {
		path := "services." + name
		if !serviceNameRE.MatchString(name) {
			v.failAt(path, "a service group is lower-case letters, digits, - and _, starting with a letter, at most 32 characters")
		}
		_, written := v.keys[path+".max_concurrent"]
		switch {
		case s.MaxConcurrent == 0 && !written:
			v.failAt(path, "services.%s needs max_concurrent: the number of requests to the group at once (1 to %d)", name, MaxConcurrentLimit)
		case s.MaxConcurrent < 1 || s.MaxConcurrent > MaxConcurrentLimit:
			v.failAt(path+".max_concurrent", "want 1 to %d, got %d", MaxConcurrentLimit, s.MaxConcurrent)
		}
	}
	if name := o.Model.Service; name != "" && !serviceNameRE.MatchString(name) {
		v.failAt("model.service", "a service group is lower-case letters, digits, - and _, starting with a letter, at most 32 characters")
	}
}

// serviceName checks a declared tool's capacity group name.
func (v *validator) serviceName(path, name string) {
	if name != "" && !serviceNameRE.MatchString(name) {
		v.failAt(path, "a service group is lower-case letters, digits, - and _, starting with a letter, at most 32 characters")
	}
}
