package inbox

// ObserverCount reports how many observers in has, so tests can see that an
// event stream removes its own when the client goes away.
func ObserverCount(in *Inbox) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.observers)
}
