package events

// KindCache is the action cache's account of a goal run: what it
// replayed, where it fell back to the model, and what it stored.
// CacheReport; Message: the account in words.
const KindCache Kind = "cache"

// CacheReport is cache's payload. The runtime publishes it when the cache
// falls back to the model and once more as the run ends; the last one is
// the run's account.
type CacheReport struct {
	// Mode is read-write or read-only.
	Mode string `json:"mode"`
	// Cached is how many calls the stored trajectory held (0: nothing was
	// stored for the scenario).
	Cached int `json:"cached"`
	// Hits are the calls replayed; Misses the cached calls that did not
	// fit the screen (at most one: the model takes over from there) or
	// a scenario with nothing cached.
	Hits   int `json:"hits"`
	Misses int `json:"misses"`
	// FellBackAt is the run's step at which the model took over, 0 when
	// it never did.
	FellBackAt int `json:"fell_back_at,omitempty"`
	// Saved is the model calls the replay saved: one per replayed call,
	// and one for a verdict the cached run ended with.
	Saved int `json:"saved"`
	// Stored says the run's trajectory was written to the cache.
	Stored bool `json:"stored"`
	// Final marks the run's last account, published as it ends.
	Final bool `json:"final,omitempty"`
}

func (CacheReport) Kind() Kind { return KindCache }

func (p CacheReport) redacted(r func(string) string) Payload {
	p.Mode = r(p.Mode)
	return p
}
