package engine

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/inbox"
)

// answerSecrets masks the answers the operator marked secret during a
// run. The run's redactor is fixed at its start; these join it as they
// arrive, in everything redacted afterwards.
type answerSecrets struct {
	mu     sync.Mutex
	values []string
	r      atomic.Pointer[redact.Redactor]
}

func (a *answerSecrets) addSecret(v string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.values = append(a.values, v)
	a.r.Store(redact.New(a.values...))
}

// all returns the secret answers so far.
func (a *answerSecrets) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.values)
}

func (a *answerSecrets) redact(s string) string {
	if r := a.r.Load(); r != nil {
		return r.String(s)
	}
	return s
}

// answerValue is an operator's answer to ask_human, which the model can
// type by its ref without reading it.
type answerValue struct {
	ref, value string
	secret     bool
	question   string // the question's id
}

// answerRef is the ref an answer is typed by.
func answerRef(questionID string) string { return "answer_" + questionID }

// keepAnswer makes an answer a value type_text can type, offering
// type_text if the run had nothing to type before, and says so to the
// model: the answer itself only when the operator marked it shareable.
// Whatever path the answer came by (console, attach, HTTP, a bridge, a
// suite's console), one without a mark is private.
func (s *runState) keepAnswer(a inbox.Answer) result {
	ref := answerRef(a.QuestionID)
	mark := a.Mark.Effective()
	s.env.answers = append(s.env.answers, answerValue{ref: ref, value: a.Value(), secret: mark == inbox.MarkSecret, question: a.QuestionID})
	if !s.book.offers.Values {
		offers := s.book.offers
		offers.Values = true
		s.setTools(offers)
	}
	if mark == inbox.MarkSecret && s.env.appOut != nil {
		// The application's output is redacted as it is written, by a
		// redactor made when it started; from now on it masks the secret
		// answers too, before type_text can make an application echo one.
		s.env.appOut.Use(s.r.redact.With(s.r.answers.all()...))
	}
	n := utf8.RuneCountInString(a.Value())
	switch mark {
	case inbox.MarkShareable:
		return ok(fmt.Sprintf("the operator answered: %s\n(type_text can type this answer with ref %q)", a.Text, ref))
	case inbox.MarkSecret:
		return ok(fmt.Sprintf("the operator answered with a secret of %d characters, which is not shown to you; type it with type_text, ref %q", n, ref))
	}
	return ok(fmt.Sprintf("the operator answered (%d characters); the answer is not shown to you; type it with type_text, ref %q", n, ref))
}

// value finds what type_text types for ref: a value the scenario
// provides, else an operator's answer.
func (e *environment) value(ref string) (value string, secret, found bool) {
	if v, sec, ok := e.files.Scenario.Value(ref); ok {
		return v, sec, true
	}
	for _, a := range e.answers {
		if a.ref == ref {
			return a.value, a.secret, true
		}
	}
	return "", false, false
}
