package stage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/events"
)

// logReporter keeps the stage's log lines.
type logReporter struct{ lines []string }

func (r *logReporter) Publish(events.Event) {}
func (r *logReporter) Offer(Offer)          {}
func (r *logReporter) Logf(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

// refusingBus is an accessibility connection and a session bus whose
// Close fails.
type refusingBus struct{ what string }

func (b refusingBus) Discover(context.Context, int, atspi.DiscoverOptions) (Discovery, error) {
	return Discovery{}, errors.New("not used")
}
func (b refusingBus) Address() string { return "unix:path=/nowhere" }
func (b refusingBus) Env() []string   { return nil }
func (b refusingBus) Close() error    { return errors.New(b.what + " would not close") }

// refusingDesk is an X connection whose Close fails; the stage calls
// nothing else of it while it is struck.
type refusingDesk struct{ Desktop }

func (refusingDesk) Close() error { return errors.New("the X connection would not close") }

// Striking the stage tells what would not stop, the accessibility
// connection, the bus the stage started and the X connection among them,
// instead of dropping it.
func TestStrikeTellsWhatWouldNotStop(t *testing.T) {
	t.Parallel()
	rep := &logReporter{}
	st := New(Config{}, rep)
	st.A11y = &Accessibility{bus: refusingBus{"the connection"}, sessionBus: refusingBus{"the bus"}}
	st.Desk = refusingDesk{}
	st.Strike()
	log := strings.Join(rep.lines, "\n")
	for _, want := range []string{"the connection would not close", "the bus would not close", "close the connection to the X session: the X connection would not close"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log %q does not say %q", log, want)
		}
	}
}
