package inbox

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/internal/httpguard"
)

const (
	// maxBodyBytes caps a request body; an answer is a few lines of text.
	maxBodyBytes = 64 << 10
	// eventBuffer is how many updates an event stream may fall behind
	// before it is ended; the client reconnects and starts from a fresh
	// snapshot rather than the server holding an unbounded backlog.
	eventBuffer = 64
	// keepAliveInterval spaces the comments that keep an idle event stream
	// open through proxies.
	keepAliveInterval = 15 * time.Second
)

// Handler serves the inbox to remote operators and bridges. Every request
// must carry "Authorization: Bearer <token>"; an empty token refuses every
// request. Routes:
//
//	GET  /questions              {"questions": [Question...]} still pending
//	GET  /history                {"entries": [Entry...]} in order
//	POST /questions/{id}/answer  body {"answer": "...", "by": "...", "mark": "private"} → Answer;
//	                             mark is private (the default), shareable or secret
//	GET  /events                 Server-Sent Events: one "pending" snapshot
//	                             {"seq", "questions"}, then one event per
//	                             Update, named by its kind, with id = seq
//
// Errors are JSON {"error": "..."}: 400 bad body or blank answer, 401 no or
// wrong token, 403 a Host that does not name the server or another
// origin's request, 404 unknown question, 409 answered or expired, 413
// body over 64 KiB, 415 a POST that is not JSON (httpguard.Guard). The
// inbox's address is an IP address or localhost, so the address a
// request reached is all Guard needs to know of it.
func (in *Inbox) Handler(token string) http.Handler {
	return httpguard.Guard("", RequireBearer(token, "kasmrt inbox", in.Routes()))
}

// Routes are Handler's routes without the token check, for a server that
// authenticates every request itself before it hands the inbox's on.
func (in *Inbox) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /questions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"questions": in.Pending()})
	})
	mux.HandleFunc("GET /history", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"entries": in.History()})
	})
	mux.HandleFunc("POST /questions/{id}/answer", in.serveAnswer)
	mux.HandleFunc("GET /events", in.serveEvents)
	return mux
}

// RequireBearer serves next only to requests whose "Authorization: Bearer"
// header carries token, compared in constant time; an empty token refuses
// every request. Others get a JSON 401 naming the realm.
func RequireBearer(token, realm string, next http.Handler) http.Handler {
	// Hashing both sides first gives equal-length inputs, so the
	// comparison's time says nothing about the token's length either.
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		gotSum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		ok := subtle.ConstantTimeCompare(gotSum[:], want[:]) == 1
		if token == "" || !strings.EqualFold(scheme, "Bearer") || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (in *Inbox) serveAnswer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Answer string `json:"answer"`
		By     string `json:"by"`
		Mark   Mark   `json:"mark"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	if err == nil && dec.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	if err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", maxBodyBytes))
			return
		}
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`want {"answer": "...", "by": "...", "mark": "private|shareable|secret"}: %v`, err))
		return
	}
	if body.By == "" {
		body.By = "http"
	}
	a, err := in.answer(r.PathValue("id"), body.Answer, body.By, body.Mark)
	switch {
	case errors.Is(err, ErrUnknownQuestion):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrAlreadyAnswered), errors.Is(err, ErrExpired):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, ErrEmptyText), errors.Is(err, ErrUnknownMark):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

func (in *Inbox) serveEvents(w http.ResponseWriter, r *http.Request) {
	updates := make(chan Update, eventBuffer)
	overflow := make(chan struct{})
	var once sync.Once

	// Subscribing and taking the snapshot under one lock leaves no gap
	// between them; updates the snapshot already reflects are skipped
	// below by their sequence number.
	in.mu.Lock()
	seq := len(in.history)
	pending := in.pendingLocked()
	stop := in.observeLocked(func(u Update) {
		select {
		case updates <- u:
		default:
			once.Do(func() { close(overflow) })
		}
	})
	in.mu.Unlock()
	defer stop()

	rc := http.NewResponseController(w)
	// A server-wide write timeout would cut a long-lived stream; not every
	// ResponseWriter supports clearing it, and then the stream simply ends
	// at that timeout and the client reconnects.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	send := func(id int, event string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s event: %w", event, err)
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, event, data); err != nil {
			return fmt.Errorf("write %s event: %w", event, err)
		}
		return rc.Flush()
	}
	snapshot := struct {
		Seq       int        `json:"seq"`
		Questions []Question `json:"questions"`
	}{seq, pending}
	if send(seq, "pending", snapshot) != nil {
		return
	}

	fellBehind := func() {
		_ = send(seq, "overflow", map[string]string{"error": "stream fell behind; reconnect"})
	}

	keepAlive := time.NewTicker(keepAliveInterval)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-overflow:
			fellBehind()
			return
		case <-keepAlive.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case u := <-updates:
			select {
			case <-overflow:
				// An update was dropped; sending the ones after it would
				// hide the gap.
				fellBehind()
				return
			default:
			}
			if u.Seq <= seq {
				continue
			}
			seq = u.Seq
			if send(u.Seq, string(u.Kind), u) != nil {
				return
			}
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// The status line is sent; an encoding or write error can only mean the
	// client went away, and there is no one left to tell.
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
