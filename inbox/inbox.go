package inbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Errors returned by Ask and Answer; match them with errors.Is.
var (
	// ErrUnanswered means a question's wait ended before anyone answered it.
	ErrUnanswered = errors.New("question not answered")
	// ErrUnknownQuestion means no question has the given ID.
	ErrUnknownQuestion = errors.New("unknown question")
	// ErrAlreadyAnswered means the question has an answer already.
	ErrAlreadyAnswered = errors.New("question already answered")
	// ErrExpired means the question stopped waiting, unanswered, before the
	// answer came.
	ErrExpired = errors.New("question expired unanswered")
	// ErrEmptyText means a question or an answer was blank.
	ErrEmptyText = errors.New("empty text")
	// ErrUnknownMark means an answer's mark is none of Marks.
	ErrUnknownMark = errors.New("unknown mark")
)

// UnansweredError is what Ask returns when its context ends first. It
// matches ErrUnanswered, the context's error and the context's cause (when
// the caller set one) with errors.Is.
type UnansweredError struct {
	QuestionID string
	Reason     string // why the wait ended: the context's cause, redacted
	err        []error
}

func (e *UnansweredError) Error() string {
	return fmt.Sprintf("question %s not answered: %s", e.QuestionID, e.Reason)
}

// Unwrap returns ErrUnanswered and the context's error and cause.
func (e *UnansweredError) Unwrap() []error { return e.err }

// Kind names what happened in the inbox.
type Kind string

// The kinds of history entries and updates.
const (
	KindAsked      Kind = "asked"      // a question was asked; Text is the question
	KindAnswered   Kind = "answered"   // a question was answered; Text is the answer
	KindPosted     Kind = "posted"     // the model posted a message; Text is the message
	KindUnanswered Kind = "unanswered" // a question stopped waiting; Text is the reason
)

// Question is a question waiting for, or once waiting for, a human.
type Question struct {
	ID    string    `json:"id"`
	Text  string    `json:"text"`
	Asked time.Time `json:"asked"`
}

// Answer is a human's reply to a question.
type Answer struct {
	QuestionID string    `json:"question_id"`
	Text       string    `json:"text"`
	By         string    `json:"by,omitempty"` // who answered: "console", "http", a bridge's name
	At         time.Time `json:"at"`
	// Mark is the operator's mark, never empty: an answer given without
	// one is private.
	Mark Mark `json:"mark"`
	// value is what the operator typed, for the run to type by ref; Text
	// is what may be shown, which for a secret answer says only its length.
	// A func, so that printing an Answer (%+v) never shows it.
	value func() string
}

// Value is the answer as the operator gave it, to be typed into the
// application; unlike Text it is never shown anywhere.
func (a Answer) Value() string {
	if a.value == nil {
		return a.Text
	}
	return a.value()
}

// Mark is how the operator marks an answer: what the model may learn of
// it. Whatever the mark, the model can type the answer by its ref.
type Mark string

// The marks. The zero Mark is MarkPrivate: an answer is never shown to the
// model unless the operator says so.
const (
	// MarkPrivate keeps the answer from the model, which learns only that
	// an answer came, its length and its ref (a code it must enter but
	// need not know). The console and the API still show it.
	MarkPrivate Mark = "private"
	// MarkShareable lets the model read the answer ("which of these
	// options?").
	MarkShareable Mark = "shareable"
	// MarkSecret masks the answer like any secret of the run: it is never
	// stored, shown or sent, only typed.
	MarkSecret Mark = "secret"
)

// Marks returns every mark, the default first, in the order the console
// cycles through them.
func Marks() []Mark { return []Mark{MarkPrivate, MarkShareable, MarkSecret} }

// Effective is m, or MarkPrivate when m is empty.
func (m Mark) Effective() Mark {
	if m == "" {
		return MarkPrivate
	}
	return m
}

// Next is the mark after m in Marks, wrapping around.
func (m Mark) Next() Mark {
	marks := Marks()
	i := slices.Index(marks, m.Effective())
	return marks[(i+1)%len(marks)]
}

// Meaning says in a few words what the mark lets the model learn, short
// enough for the console's input row.
func (m Mark) Meaning() string {
	switch m.Effective() {
	case MarkShareable:
		return "model can read it"
	case MarkSecret:
		return "masked; model can type it"
	}
	return "model can type it, not read it"
}

// UnmarshalText accepts the marks' names, and the empty string as private;
// anything else is an error naming the marks.
func (m *Mark) UnmarshalText(b []byte) error {
	v := Mark(b)
	if v != "" && !slices.Contains(Marks(), v) {
		return fmt.Errorf("%w %q: want one of %s", ErrUnknownMark, b, markNames())
	}
	*m = v.Effective()
	return nil
}

func markNames() string {
	names := make([]string, 0, 3)
	for _, m := range Marks() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// Entry is one thing that happened in the inbox. Seq numbers entries from 1
// in the order they happened.
type Entry struct {
	Seq        int       `json:"seq"`
	Kind       Kind      `json:"kind"`
	QuestionID string    `json:"question_id,omitempty"`
	Text       string    `json:"text"`
	By         string    `json:"by,omitempty"`
	At         time.Time `json:"at"`
}

// Update tells an observer about the entry just added to the history and,
// for asked, answered and unanswered entries, the question it concerns.
type Update struct {
	Entry
	Question *Question `json:"question,omitempty"`
}

// Options configure an Inbox. The zero value is usable.
type Options struct {
	// Redact is applied to every text the inbox stores, and so to everything
	// it returns, notifies or serves: questions, answers, who answered,
	// posted messages and reasons. Nil stores text unchanged.
	Redact func(string) string

	// Notify is called with each new question, after the observers, so that
	// a messaging bridge can forward it. The bridge answers through
	// Inbox.Answer or the HTTP endpoint, never through Notify's return. Like
	// an observer, Notify must not block for long.
	Notify func(Question)

	// OnSecret is called with the value of an answer marked secret before
	// anything of it is stored, so the run's redactor can mask it
	// wherever it shows later (an application echoing what was typed).
	OnSecret func(string)
}

// Inbox holds a run's questions to a human, their answers and the messages
// the model posts. It is safe for concurrent use.
type Inbox struct {
	redact   func(string) string
	notify   func(Question)
	onSecret func(string)

	mu        sync.Mutex
	asked     int // questions asked so far; the next ID is "q" + asked+1
	questions map[string]*question
	order     []*question // questions in the order they were asked
	history   []Entry
	observers []observer
	watchers  int // observers registered so far, for their IDs

	// Updates wait in queue until delivered; the goroutine that finds
	// nobody delivering becomes the deliverer until the queue is empty.
	// That keeps updates in history order without a background goroutine
	// and lets an observer call back into the inbox without deadlock.
	queue      []Update
	delivering bool
}

type question struct {
	Question
	state  Kind // KindAsked while pending, then KindAnswered or KindUnanswered
	answer Answer
	done   chan struct{} // closed when answered
}

type observer struct {
	id int
	fn func(Update)
}

// New returns an empty inbox.
func New(opts Options) *Inbox {
	redact := opts.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Inbox{
		redact:    redact,
		notify:    opts.Notify,
		onSecret:  opts.OnSecret,
		questions: make(map[string]*question),
	}
}

// Ask registers a question, tells the observers and blocks until the
// question is answered or ctx ends. When ctx ends first the question is
// marked unanswered, with the context's cause as the reason, and Ask
// returns an *UnansweredError.
func (in *Inbox) Ask(ctx context.Context, text string) (Answer, error) {
	if strings.TrimSpace(text) == "" {
		return Answer{}, fmt.Errorf("ask: %w", ErrEmptyText)
	}
	in.mu.Lock()
	in.asked++
	q := &question{
		Question: Question{
			ID:    "q" + strconv.Itoa(in.asked),
			Text:  in.redact(text),
			Asked: time.Now(),
		},
		state: KindAsked,
		done:  make(chan struct{}),
	}
	in.questions[q.ID] = q
	in.order = append(in.order, q)
	in.appendLocked(Entry{Kind: KindAsked, QuestionID: q.ID, Text: q.Text, At: q.Asked}, &q.Question)
	in.mu.Unlock()
	in.deliver()

	select {
	case <-q.done:
		return q.answer, nil
	case <-ctx.Done():
	}

	in.mu.Lock()
	if q.state == KindAnswered {
		// The answer arrived while the context was ending; it wins.
		in.mu.Unlock()
		return q.answer, nil
	}
	errs := []error{ErrUnanswered, ctx.Err()}
	cause := context.Cause(ctx)
	if cause != ctx.Err() {
		errs = append(errs, cause)
	}
	reason := in.redact(cause.Error())
	q.state = KindUnanswered
	in.appendLocked(Entry{Kind: KindUnanswered, QuestionID: q.ID, Text: reason, At: time.Now()}, &q.Question)
	in.mu.Unlock()
	in.deliver()
	return Answer{}, &UnansweredError{QuestionID: q.ID, Reason: reason, err: errs}
}

// Answer answers the pending question id with text, recording who answered,
// unmarked: the answer is private, kept from the model. It fails with
// ErrUnknownQuestion, ErrAlreadyAnswered, ErrExpired or ErrEmptyText.
func (in *Inbox) Answer(id, text, by string) error {
	_, err := in.answer(id, text, by, MarkPrivate)
	return err
}

// AnswerMarked answers like Answer, with the operator's mark (Answer's
// is private).
func (in *Inbox) AnswerMarked(id, text, by string, m Mark) error {
	_, err := in.answer(id, text, by, m)
	return err
}

func (in *Inbox) answer(id, text, by string, m Mark) (Answer, error) {
	if strings.TrimSpace(text) == "" {
		return Answer{}, fmt.Errorf("answer %s: %w", id, ErrEmptyText)
	}
	in.mu.Lock()
	q, ok := in.questions[id]
	switch {
	case !ok:
		in.mu.Unlock()
		return Answer{}, fmt.Errorf("answer %q: %w", in.redact(id), ErrUnknownQuestion)
	case q.state == KindAnswered:
		in.mu.Unlock()
		return Answer{}, fmt.Errorf("answer %s: %w", id, ErrAlreadyAnswered)
	case q.state == KindUnanswered:
		in.mu.Unlock()
		return Answer{}, fmt.Errorf("answer %s: %w", id, ErrExpired)
	}
	m = m.Effective()
	if !slices.Contains(Marks(), m) {
		in.mu.Unlock()
		return Answer{}, fmt.Errorf("answer %s: %w %q: want one of %s", id, ErrUnknownMark, in.redact(string(m)), markNames())
	}
	q.state = KindAnswered
	shown := in.redact(text)
	if m == MarkSecret {
		if in.onSecret != nil {
			in.onSecret(text)
		}
		shown = fmt.Sprintf("(a secret answer of %d characters)", utf8.RuneCountInString(text))
	}
	q.answer = Answer{QuestionID: id, Text: shown, By: in.redact(by), At: time.Now(),
		Mark: m, value: func() string { return text }}
	close(q.done)
	in.appendLocked(Entry{Kind: KindAnswered, QuestionID: id, Text: q.answer.Text, By: q.answer.By, At: q.answer.At}, &q.Question)
	a := q.answer
	in.mu.Unlock()
	in.deliver()
	return a, nil
}

// Post records a message from the model to the operator (the respond tool)
// and tells the observers.
func (in *Inbox) Post(text string) {
	in.mu.Lock()
	in.appendLocked(Entry{Kind: KindPosted, Text: in.redact(text), At: time.Now()}, nil)
	in.mu.Unlock()
	in.deliver()
}

// Pending returns the questions still waiting for an answer, oldest first.
func (in *Inbox) Pending() []Question {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.pendingLocked()
}

func (in *Inbox) pendingLocked() []Question {
	pending := []Question{}
	for _, q := range in.order {
		if q.state == KindAsked {
			pending = append(pending, q.Question)
		}
	}
	return pending
}

// History returns every question, answer, expiry and posted message so far,
// in order.
func (in *Inbox) History() []Entry {
	in.mu.Lock()
	defer in.mu.Unlock()
	// Never nil, so that an empty history encodes as [] rather than null.
	return append([]Entry{}, in.history...)
}

// Observe calls fn with every later change to the inbox, in history order,
// until the returned stop function is called. Calls come from the goroutine
// that made or delivered the change, one at a time, so fn must not block
// for long; it may call any method of the inbox. An update already on its
// way may still reach fn once after stop returns.
func (in *Inbox) Observe(fn func(Update)) (stop func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.observeLocked(fn)
}

func (in *Inbox) observeLocked(fn func(Update)) (stop func()) {
	in.watchers++
	id := in.watchers
	in.observers = append(in.observers, observer{id: id, fn: fn})
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.observers = slices.DeleteFunc(in.observers, func(o observer) bool { return o.id == id })
	}
}

// appendLocked adds e to the history and queues its update for delivery.
// The caller holds in.mu and calls deliver after unlocking it.
func (in *Inbox) appendLocked(e Entry, q *Question) {
	e.Seq = len(in.history) + 1
	in.history = append(in.history, e)
	u := Update{Entry: e}
	if q != nil {
		copied := *q
		u.Question = &copied
	}
	in.queue = append(in.queue, u)
}

// deliver hands queued updates to the observers and, for new questions, to
// Notify, unless another goroutine is already doing so.
func (in *Inbox) deliver() {
	in.mu.Lock()
	if in.delivering {
		in.mu.Unlock()
		return
	}
	in.delivering = true
	// An observer that panics must not leave the inbox believing someone
	// is still delivering, or no update would ever be delivered again.
	finished := false
	defer func() {
		if !finished {
			in.mu.Lock()
			in.delivering = false
			in.mu.Unlock()
		}
	}()
	for len(in.queue) > 0 {
		u := in.queue[0]
		in.queue = in.queue[1:]
		observers := slices.Clone(in.observers)
		in.mu.Unlock()
		for _, o := range observers {
			o.fn(u)
		}
		if u.Kind == KindAsked && in.notify != nil {
			in.notify(*u.Question)
		}
		in.mu.Lock()
	}
	in.delivering = false
	finished = true
	in.mu.Unlock()
}
