package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/vnc"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// An operator's takeover of the desktop (kasmrt run --takeover): the loop
// or the script pauses at its next turn, x11vnc serves the run's display
// on a loopback address with a one-time password, and when the operator
// hands back the run looks at what changed, records it and tells the
// model before it goes on.

// TakeoverAccess is how the operator reaches a taken-over desktop. The
// password is a secret: it is in the run's redactor from the moment it
// is drawn, so it reaches no event, log line or report file, and only the
// caller of TakeOver sees it.
type TakeoverAccess struct {
	// Addr is the VNC server's loopback host:port.
	Addr string `json:"addr"`
	// URL is Addr as a vnc:// URL, for viewers that open one.
	URL      string `json:"url"`
	Password string `json:"password"`
}

// Errors of TakeOver and HandBack.
var (
	ErrTakeoverOff  = errors.New("this run was not started with --takeover")
	ErrNotTakenOver = errors.New("the desktop is not taken over")
	ErrRunOver      = errors.New("the run is over")
)

// vncStarter starts a VNC server on a display: x11vnc, or the rule tests'
// stand-in.
type vncStarter interface {
	StartVNC(ctx context.Context, o vnc.Options) (vncServer, error)
}

// vncServer is a running VNC server.
type vncServer interface {
	Addr() string
	// Done is closed when the server ends: its one client left.
	Done() <-chan struct{}
	Stop() error
}

type x11vnc struct{}

func (x11vnc) StartVNC(ctx context.Context, o vnc.Options) (vncServer, error) {
	s, err := vnc.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// takeoverDesk is the run's takeover as the operator's side sees it: the
// requests waiting for the loop's next pause, the takeover in progress
// and its hand-back. The console and the API call into it from their own
// goroutines; the run's goroutine acts on it at its pause points.
type takeoverDesk struct {
	addr           string
	pausesDeadline bool

	mu sync.Mutex
	// waiting are the requests the next pause point answers; by is who
	// asked first.
	waiting []chan takeoverReply
	by      string
	active  *TakeoverAccess
	// back is closed to hand back; it exists while a takeover is asked
	// for or in progress.
	back     chan struct{}
	backOnce *sync.Once
	over     bool
}

type takeoverReply struct {
	access TakeoverAccess
	err    error
}

func newTakeoverDesk(addr string, pausesDeadline bool) *takeoverDesk {
	return &takeoverDesk{addr: addr, pausesDeadline: pausesDeadline}
}

// TakeOver asks for the desktop: the run pauses at its next turn (or
// between two script steps) and starts the VNC server. It returns once
// the server listens, with its address and one-time password; a takeover
// already in progress is answered with its access. by says who asks
// (console, api). While the model's ask_human question waits for its
// answer the run is at a pause point too: the takeover begins at once
// (askWithTakeovers).
func (r *Runner) TakeOver(ctx context.Context, by string) (TakeoverAccess, error) {
	d := r.takeover
	if d == nil {
		return TakeoverAccess{}, ErrTakeoverOff
	}
	d.mu.Lock()
	switch {
	case d.over:
		d.mu.Unlock()
		return TakeoverAccess{}, ErrRunOver
	case d.active != nil:
		a := *d.active
		d.mu.Unlock()
		return a, nil
	}
	reply := make(chan takeoverReply, 1)
	if len(d.waiting) == 0 {
		d.by = by
		d.back, d.backOnce = make(chan struct{}), new(sync.Once)
	}
	d.waiting = append(d.waiting, reply)
	d.mu.Unlock()
	// A paused loop wakes for it: a takeover pauses the loop anyway.
	r.steer.wantTakeover(true)
	select {
	case rep := <-reply:
		return rep.access, rep.err
	case <-ctx.Done():
		return TakeoverAccess{}, ctx.Err()
	}
}

// HandBack ends the takeover in progress, or withdraws one asked for and
// not yet begun. The run captures the screen, records what changed and
// resumes.
func (r *Runner) HandBack() error {
	d := r.takeover
	if d == nil {
		return ErrTakeoverOff
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.back == nil {
		return ErrNotTakenOver
	}
	d.backOnce.Do(func() { close(d.back) })
	if d.active == nil {
		// Not begun: the requests are withdrawn.
		d.answer(takeoverReply{err: errors.New("the takeover was handed back before it began")})
		d.back = nil
		r.steer.wantTakeover(false)
	}
	return nil
}

// TakenOver returns the access of the takeover in progress, if any.
func (r *Runner) TakenOver() (TakeoverAccess, bool) {
	d := r.takeover
	if d == nil {
		return TakeoverAccess{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active == nil {
		return TakeoverAccess{}, false
	}
	return *d.active, true
}

// answer replies to every waiting request; d.mu is held.
func (d *takeoverDesk) answer(rep takeoverReply) {
	for _, w := range d.waiting {
		w <- rep
	}
	d.waiting = nil
}

// asked reports whether a takeover waits to begin, who asked, and the
// channel that hands it back.
func (d *takeoverDesk) asked() (by string, back <-chan struct{}, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.waiting) == 0 || d.active != nil {
		return "", nil, false
	}
	return d.by, d.back, true
}

// began makes the takeover active and answers its requests.
func (d *takeoverDesk) began(a TakeoverAccess) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active = &a
	d.answer(takeoverReply{access: a})
}

// failed answers the requests with err; nothing is taken over.
func (d *takeoverDesk) failed(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answer(takeoverReply{err: err})
	d.back = nil
}

// ended clears the takeover once the run has it back.
func (d *takeoverDesk) ended() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active, d.back = nil, nil
}

// close refuses takeovers from now on: the run's work is over.
func (d *takeoverDesk) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.over = true
	d.answer(takeoverReply{err: ErrRunOver})
	d.back = nil
}

// wantTakeover wakes a paused loop for a takeover (waitWhilePaused lets it
// through), or stops doing so.
func (s *steering) wantTakeover(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.takeover = on
	close(s.changed)
	s.changed = make(chan struct{})
}

// changes is closed at the operator's next steering change, a takeover
// asked for among them.
func (s *steering) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// askWithTakeovers puts the model's question to the operator and waits
// for the answer until askCtx ends. The run is inside ask_human all that
// time, and an operator may well want to look at the app before they
// answer: so once the question is asked, a takeover asked for begins at
// once, as at the loop's pause point, and the wait goes on when the
// desktop is handed back. An answer given during the takeover is kept
// until the hand-back: the desktop stays the operator's until they give it
// back. The takeovers' Environment Updates are returned for the model;
// the run's work context, ctx, bounds the takeovers, not askCtx, so the
// question's answer timeout does not take the desktop back. takeoverPoint
// is the run's.
func askWithTakeovers(ctx, askCtx context.Context, in *inbox.Inbox, steer *steering, question string, takeoverPoint func(context.Context) string) (inbox.Answer, []string, error) {
	type reply struct {
		a   inbox.Answer
		err error
	}
	// The run publishes the question from its own observer, registered
	// first, so a takeover begins after the question is on the record.
	asked := make(chan struct{})
	var once sync.Once
	stop := in.Observe(func(u inbox.Update) {
		if u.Kind == inbox.KindAsked {
			once.Do(func() { close(asked) })
		}
	})
	defer stop()
	answered := make(chan reply, 1)
	go func() {
		a, err := in.Ask(askCtx, question)
		answered <- reply{a, err}
	}()
	var updates []string
	var wake <-chan struct{} = asked
	for {
		select {
		case got := <-answered:
			return got.a, updates, got.err
		case <-wake:
		}
		// Watched before the look, so a takeover asked for after it
		// wakes the wait.
		wake = steer.changes()
		if upd := takeoverPoint(ctx); upd != "" {
			updates = append(updates, upd)
		}
	}
}

// lookAround is what the run sees of the desktop at a takeover's start
// and end: the screen and the windows.
type lookAround struct {
	rel     string
	img     *image.RGBA
	windows map[uint32]string // viewable top-level windows with a title
	order   []uint32
	focus   string
}

func (a *actor) lookAround(ctx context.Context) lookAround {
	var l lookAround
	rel, img, err := a.capture(ctx, false, false)
	if err != nil {
		a.log("capture the screen for the takeover: %v", err)
	}
	l.rel, l.img = rel, img
	l.windows = map[uint32]string{}
	if ws, err := a.env.desk.Windows(); err != nil {
		a.log("list the windows for the takeover: %v", err)
	} else {
		for _, w := range ws {
			if w.Viewable && w.Title != "" {
				l.windows[w.ID] = truncate(a.r.Redact(w.Title), 120)
				l.order = append(l.order, w.ID)
			}
		}
	}
	if w, ok, err := a.env.desk.FocusedWindow(); err == nil && ok {
		l.focus = truncate(a.r.Redact(w.Title), 120)
	}
	return l
}

// takeoverPoint is the pause point of the loop and the script: when the
// operator has asked for the desktop, the run is theirs until they hand it
// back. It returns the Environment Update for the model, or "" when there
// was no takeover.
func (s *runState) takeoverPoint(ctx context.Context) string {
	d := s.r.takeover
	if d == nil {
		return ""
	}
	by, back, ok := d.asked()
	if !ok {
		return ""
	}
	s.r.steer.wantTakeover(false)
	if ctx.Err() != nil {
		d.failed(ErrRunOver)
		return ""
	}
	if s.env.desk == nil || s.env.session == nil || s.env.web.PageIsTheScreen() {
		d.failed(errors.New("this run has no desktop to take over (a headless browser's page is its screen)"))
		return ""
	}
	return s.takeOver(ctx, by, back)
}

// takeOver runs one takeover to its end, in the steps below: the
// password and the private directory exist only while the VNC server
// serves the display, and what changed is recorded once it is back.
func (s *runState) takeOver(ctx context.Context, by string, back <-chan struct{}) string {
	d := s.r.takeover
	password, err := vnc.NewPassword()
	if err != nil {
		d.failed(err)
		return ""
	}
	// From here on the password is a secret of the run: whatever carries
	// it to an event, a log line or a report file is redacted.
	s.r.answers.addSecret(password)
	dir, err := os.MkdirTemp("", "kasmrt-takeover-")
	if err != nil {
		d.failed(fmt.Errorf("make the takeover's private directory: %w", err))
		return ""
	}
	defer os.RemoveAll(dir)
	before := s.act.lookAround(ctx)
	srv, err := s.r.startVNC(ctx, s.env.session, password, dir)
	if err != nil {
		s.log("%v", err)
		d.failed(err)
		return ""
	}
	a := TakeoverAccess{Addr: srv.Addr(), URL: "vnc://" + srv.Addr(), Password: password}
	how, took := s.awaitHandBack(ctx, by, back, srv, a, before.rel)
	return s.recordHandBack(by, before, how, took)
}

// startVNC starts the VNC server on the run's display (session) with
// the takeover's password, so the operator's viewer can reach it; dir is
// the server's private directory.
func (r *Runner) startVNC(ctx context.Context, session displayServer, password, dir string) (vncServer, error) {
	var env []string
	if xa := r.getenv("XAUTHORITY"); xa != "" && !session.Owned() {
		env = append(env, "XAUTHORITY="+xa)
	}
	srv, err := r.vnc.StartVNC(ctx, vnc.Options{Display: session.Display(), Addr: r.takeover.addr, Password: password, Dir: dir, Env: env})
	if err != nil {
		return nil, fmt.Errorf("start the VNC server for the takeover: %w", err)
	}
	return srv, nil
}

// awaitHandBack gives the operator the desktop and waits until they hand
// it back, their viewer leaves or the run ends, because the run may not
// act on the app while it is theirs. It stops the server, and returns how
// the takeover ended and how long it took; the deadline does not count
// that time when the takeover pauses it.
func (s *runState) awaitHandBack(ctx context.Context, by string, back <-chan struct{}, srv vncServer, a TakeoverAccess, screen string) (how string, took time.Duration) {
	d := s.r.takeover
	if d.pausesDeadline && s.r.clock != nil {
		s.r.clock.pause()
	}
	start := time.Now()
	s.bus.Publish(events.Event{Screen: screen,
		Message: fmt.Sprintf("the operator (%s) took over the desktop: VNC at %s; the run waits until they hand it back", by, a.Addr),
		Data:    events.TakeoverStarted{Addr: a.Addr, By: by, PausesDeadline: d.pausesDeadline}})
	d.began(a)

	how = events.TakeoverHandedBack
	select {
	case <-back:
	case <-srv.Done():
		how = events.TakeoverClientLeft
	case <-ctx.Done():
		how = events.TakeoverRunEnded
	case <-s.env.session.Done():
		how = events.TakeoverRunEnded
	}
	if err := srv.Stop(); err != nil {
		s.log("%v", err)
	}
	took = time.Since(start)
	if d.pausesDeadline && s.r.clock != nil {
		s.r.clock.resume()
	}
	d.ended()
	return how, took
}

// recordHandBack looks at the desktop the operator handed back and
// records what changed, because what they did by hand is part of the
// result and the model's picture of the screen is out of date. It returns
// the Environment Update for the model, or "" when the run ended.
func (s *runState) recordHandBack(by string, before lookAround, how string, took time.Duration) string {
	// The work context may be over (the deadline during the takeover):
	// the look at what changed is part of the record all the same.
	lookCtx, cancel := context.WithTimeout(s.env.life, 10*time.Second)
	defer cancel()
	after := s.act.lookAround(lookCtx)
	ended := windowChanges(before, after)
	ended.DurationS, ended.Ended = took.Round(100*time.Millisecond).Seconds(), how
	var box *events.Rect
	var area image.Rectangle
	if before.img != nil && after.img != nil {
		if area = changedBox(before.img, after.img); !area.Empty() {
			ended.ScreenChanged = true
			box = &events.Rect{X: area.Min.X, Y: area.Min.Y, W: area.Dx(), H: area.Dy()}
		}
	}
	var bounds image.Rectangle
	if after.img != nil {
		bounds = after.img.Bounds()
	}
	update := takeoverUpdate(ended, area, bounds)
	s.bus.Publish(events.Event{Screen: after.rel, Box: box, Message: update, Data: ended})
	s.concern(fmt.Sprintf("the operator took over the desktop (%s); what they did by hand is part of this result, and their keystrokes were not recorded", by))
	// What the model saw of the screen is out of date.
	s.book.observed = false
	if how == events.TakeoverRunEnded {
		return ""
	}
	return update
}

// windowChanges compares the windows and the focus before and after a
// takeover, because the model is told what is different in words: the
// windows opened and closed, by title, in the order the desktop lists
// them.
func windowChanges(before, after lookAround) events.TakeoverEnded {
	ended := events.TakeoverEnded{WindowsOpened: []string{}, WindowsClosed: []string{}, FocusBefore: before.focus, FocusAfter: after.focus}
	for _, id := range after.order {
		if _, ok := before.windows[id]; !ok {
			ended.WindowsOpened = append(ended.WindowsOpened, after.windows[id])
		}
	}
	for _, id := range before.order {
		if _, ok := after.windows[id]; !ok {
			ended.WindowsClosed = append(ended.WindowsClosed, before.windows[id])
		}
	}
	return ended
}

// takeoverUpdate is the Environment Update that tells the model the
// operator acted and what is different. It names windows and the part of
// the screen in words, never in pixels.
func takeoverUpdate(e events.TakeoverEnded, changed, screen image.Rectangle) string {
	var b strings.Builder
	b.WriteString("Environment Update\n")
	fmt.Fprintf(&b, "The operator took over the desktop for %gs and handed it back", e.DurationS)
	if e.Ended == events.TakeoverClientLeft {
		b.WriteString(" (they closed their VNC viewer)")
	}
	b.WriteString(". You do not know what they typed or clicked; this is what is different now:\n")
	var said bool
	if len(e.WindowsOpened) > 0 {
		fmt.Fprintf(&b, "- windows opened: %s\n", strings.Join(quoteAll(e.WindowsOpened), ", "))
		said = true
	}
	if len(e.WindowsClosed) > 0 {
		fmt.Fprintf(&b, "- windows closed: %s\n", strings.Join(quoteAll(e.WindowsClosed), ", "))
		said = true
	}
	if e.FocusBefore != e.FocusAfter {
		fmt.Fprintf(&b, "- the focus moved from %q to %q\n", e.FocusBefore, e.FocusAfter)
		said = true
	}
	if e.ScreenChanged {
		fmt.Fprintf(&b, "- the screen changed in %s\n", describeArea(changed, screen))
		said = true
	}
	if !said {
		b.WriteString("- nothing: the windows, the focus and the screen are as they were\n")
	}
	b.WriteString("Observe the screen before your next action: what you saw before the takeover may be out of date.")
	return b.String()
}

// describeArea names a part of the screen in words: how much of it, and
// where.
func describeArea(r, screen image.Rectangle) string {
	if screen.Empty() {
		return "some area"
	}
	pct := 100 * float64(r.Dx()*r.Dy()) / float64(screen.Dx()*screen.Dy())
	c := r.Min.Add(r.Max).Div(2)
	third := func(v, lo, size int, names [3]string) string {
		return names[min(2, max(0, 3*(v-lo)/max(1, size)))]
	}
	where := third(c.Y, screen.Min.Y, screen.Dy(), [3]string{"top", "middle", "bottom"}) + " " +
		third(c.X, screen.Min.X, screen.Dx(), [3]string{"left", "centre", "right"})
	if where == "middle centre" {
		where = "centre"
	}
	size := fmt.Sprintf("about %.0f%% of it", pct)
	if pct < 1 {
		size = "less than 1% of it"
	}
	return fmt.Sprintf("an area of %s, around the %s", size, where)
}
