package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/scenarios"
)

// QuestionNotice is the JSON body inbox.notify.webhook receives when a
// question waits for an answer.
type QuestionNotice struct {
	Kind     string         `json:"kind"` // "kasmrt.question"
	Scenario string         `json:"scenario"`
	Report   string         `json:"report"`
	Question inbox.Question `json:"question"`
	// AnswerURL is where to POST {"answer": "...", "mark": "..."} with the
	// bearer token, when the run's API is served (run --listen,
	// inbox.listen); without a mark the answer is private.
	AnswerURL string `json:"answer_url,omitempty"`
}

// notifier posts a notice of each question to the webhook. Posting runs
// beside the question's wait, bounded by the webhook's timeout; the run
// hears how it went when the question's wait is over.
type notifier struct {
	r       *Runner
	hook    *scenarios.WebhookConfig
	client  *http.Client
	timeout time.Duration

	// inFlight bounds the notices posted and not yet heard back from
	// (maxNoticesInFlight).
	inFlight int

	mu          sync.Mutex
	outstanding int
	// unsent counts the questions that got no notice because inFlight
	// were already in flight.
	unsent  int
	results chan noticeResult
}

// maxNoticesInFlight bounds the notices posted and not yet heard back
// from. A question asked while that many are in flight gets no notice, and
// the run's end says how many went without one.
const maxNoticesInFlight = 64

type noticeResult struct {
	question string
	err      error
}

// newNotifier returns the run's notifier, or nil without a webhook.
func newNotifier(r *Runner) *notifier {
	hook := r.files.Operator.Inbox.Notify.Webhook
	if hook == nil {
		return nil
	}
	timeout := time.Duration(hook.Timeout() * float64(time.Second))
	return &notifier{
		r: r, hook: hook, timeout: timeout,
		// The timeout covers the whole exchange: connecting, a receiver
		// that never answers, a body that never ends.
		client: &http.Client{
			Timeout: timeout,
			// A redirect is never followed: it would carry the notice and
			// the credential headers to a URL the operator never named.
			// The 3xx is the reply, and not a 2xx, so it is a concern.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		inFlight: maxNoticesInFlight,
		results:  make(chan noticeResult, maxNoticesInFlight),
	}
}

// question is the inbox's Notify: it starts the notice and returns.
func (n *notifier) question(q inbox.Question) {
	n.mu.Lock()
	if n.outstanding >= n.inFlight {
		n.unsent++
		n.mu.Unlock()
		return
	}
	n.outstanding++
	n.mu.Unlock()
	go func() {
		// No more results wait than notices are outstanding, so the
		// channel has room for this one.
		n.results <- noticeResult{question: q.ID, err: n.post(q)}
	}()
}

// takeUnsent returns how many questions got no notice since it was last
// called. A nil notifier sent none.
func (n *notifier) takeUnsent() int {
	if n == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	unsent := n.unsent
	n.unsent = 0
	return unsent
}

// answerURL is where question id can be answered over HTTP, or "".
func (n *notifier) answerURL(id string) string {
	switch {
	case n.r.opts.Published != "":
		return n.r.opts.Published + "/questions/" + url.PathEscape(id) + "/answer"
	case n.r.inboxListener != nil:
		return "http://" + n.r.inboxListener.Addr().String() + "/questions/" + url.PathEscape(id) + "/answer"
	}
	return ""
}

func (n *notifier) post(q inbox.Question) error {
	body, err := json.Marshal(QuestionNotice{
		Kind: "kasmrt.question", Scenario: n.r.files.Scenario.Name, Report: n.r.opts.ReportDir,
		Question: q, AnswerURL: n.answerURL(q.ID),
	})
	if err != nil {
		return fmt.Errorf("encode the notice: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.hook.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build the request: %w", err)
	}
	for k, v := range n.hook.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kasmrt/"+n.r.opts.Version)
	resp, err := n.client.Do(req)
	if ctx.Err() != nil {
		return fmt.Errorf("no reply within %g s (inbox.notify.webhook.timeout_s)", n.timeout.Seconds())
	}
	if err != nil {
		// The client's error names the URL as it re-encodes it, which the
		// redaction of the operator file's text may not recognise, and the
		// URL is a credential: keep only what went wrong.
		if uerr, ok := errors.AsType[*url.Error](err); ok {
			err = uerr.Err
		}
		return fmt.Errorf("post the notice: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}

// settle waits, at most the webhook's timeout, for the notices still in
// flight and returns what became of them, so a failure is the run's
// concern. A nil notifier has nothing to settle.
func (n *notifier) settle(ctx context.Context) []noticeResult {
	if n == nil {
		return nil
	}
	var out []noticeResult
	deadline := time.NewTimer(n.timeout + time.Second)
	defer deadline.Stop()
	for {
		// A notice already settled is taken even when ctx has ended (an
		// abort during the wait), so its failure is still a concern.
		out = append(out, n.collect()...)
		n.mu.Lock()
		left := n.outstanding
		n.mu.Unlock()
		if left == 0 {
			return out
		}
		select {
		case res := <-n.results:
			out = append(out, n.received(res))
		case <-deadline.C:
			return out
		case <-ctx.Done():
			return out
		}
	}
}

// received counts a finished notice off the ones in flight.
func (n *notifier) received(res noticeResult) noticeResult {
	n.mu.Lock()
	n.outstanding--
	n.mu.Unlock()
	return res
}

// collect returns what became of the notices that have finished, without
// waiting for the others. A nil notifier has nothing to collect.
func (n *notifier) collect() []noticeResult {
	if n == nil {
		return nil
	}
	var out []noticeResult
	for {
		select {
		case res := <-n.results:
			out = append(out, n.received(res))
		default:
			return out
		}
	}
}

// announce records how the notices of questions went: a failed one is a
// concern (the operator may never have heard of the question), and so,
// once at the run's end, are the questions that got no notice. Once a
// question is over only the notices already done are told, so a slow
// receiver never holds the run; at the run's end (wait) the rest are
// waited for, at most the webhook's timeout.
func (s *runState) announce(ctx context.Context, wait bool) {
	results := s.r.notifier.collect()
	if wait {
		results = append(results, s.r.notifier.settle(ctx)...)
		if unsent := s.r.notifier.takeUnsent(); unsent > 0 {
			s.concern(fmt.Sprintf("the webhook was not told of %d questions: %d notices were already in flight, the most a run sends at once", unsent, s.r.notifier.inFlight))
		}
	}
	for _, res := range results {
		if res.err != nil {
			s.concern(fmt.Sprintf("the webhook was not told of question %s: %v", res.question, res.err))
		} else {
			s.log("the webhook was told of question %s", res.question)
		}
	}
}
