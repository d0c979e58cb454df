package atspi

import (
	"context"
	"errors"
	"image"
	"syscall"
	"testing"
	"time"
)

// TestStuckActionIsAnError presses a control of an application whose
// process is stopped, as a frozen application's main loop is: the call
// comes back within ActionTimeout as ErrActionStuck, never as a success,
// and a read of the controls comes back within CallTimeout too.
func TestStuckActionIsAnError(t *testing.T) {
	t.Parallel()
	_, app, p := zenityProcess(t)
	yes, err := FindControl(waitControls(t, app, "Yes"), "Yes")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(p.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(p.PID(), syscall.SIGCONT) })
	// The caller allows far longer than the bounds: the bounds end the calls.
	long, cancelLong := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancelLong()
	if err := yes.Click(long); !errors.Is(err, ErrActionStuck) {
		t.Errorf("Click on a stopped application = %v, want ErrActionStuck", err)
	}
	if _, err := app.ControlsWithin(long, Limits{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ControlsWithin on a stopped application = %v, want its bound to end it", err)
	}
}

// TestContains asks a control whether it holds its own centre and a point
// outside it, and where the window it is in is.
func TestContains(t *testing.T) {
	t.Parallel()
	_, app, _ := zenity(t)
	yes, err := FindControl(waitControls(t, app, "Yes"), "Yes")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		p    image.Point
		want bool
	}{{yes.Centre(), true}, {yes.Extents.Min.Sub(image.Pt(5, 5)), false}} {
		if got, err := yes.Contains(ctx, c.p); err != nil || got != c.want {
			t.Errorf("Contains(%v) = %v, %v; want %v", c.p, got, err, c.want)
		}
	}
	// The dialog's window holds its button, and is more than the button.
	win, err := yes.WindowExtents(ctx)
	if err != nil || !yes.Extents.In(win) || win.Eq(yes.Extents) {
		t.Errorf("WindowExtents = %v, %v; want the dialog's window around the button %v", win, err, yes.Extents)
	}
}
