package serve

import (
	"context"
	"errors"
	"net/http"

	"github.com/kasmrt/kasmrt/engine"
)

// takeoverable is a published run started with --takeover: an operator
// may take its desktop over and hand it back (engine/takeover.go).
type takeoverable interface {
	TakeOver(ctx context.Context, by string) (engine.TakeoverAccess, error)
	HandBack() error
	// TakenOver is the takeover in progress, if any.
	TakenOver() (engine.TakeoverAccess, bool)
}

// takeoverRoutes are the takeover's routes; only a run has them.
func takeoverRoutes() []route {
	return []route{
		{http.MethodPost, "/v1/runs/{id}/takeover", forRun((*api).takeOver)},
		{http.MethodPost, "/v1/runs/{id}/handback", forRun((*api).handBack)},
	}
}

// takeoverOf finds the run's takeover, or answers 409.
func takeoverOf(w http.ResponseWriter, r *http.Request, t Watched) (takeoverable, bool) {
	if r.ContentLength != 0 {
		var body struct{}
		if !readBody(w, r, &body) {
			return nil, false
		}
	}
	to, ok := t.(takeoverable)
	if !ok {
		writeError(w, http.StatusConflict, engine.ErrTakeoverOff.Error())
		return nil, false
	}
	return to, true
}

// takeOver pauses the run at its next turn (at once while the model's
// question waits for an answer), starts the VNC server and answers where
// it listens and its one-time password. The answer is the only place the
// password goes: it is no-store, and the run redacts it from everything
// it writes.
func (a *api) takeOver(w http.ResponseWriter, r *http.Request, t Watched) {
	to, ok := takeoverOf(w, r, t)
	if !ok {
		return
	}
	acc, err := to.TakeOver(r.Context(), "api")
	switch {
	case errors.Is(err, engine.ErrTakeoverOff), errors.Is(err, engine.ErrRunOver):
		// The run's state refuses it.
		writeError(w, http.StatusConflict, err.Error())
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeJSON(w, http.StatusOK, takeoverAnswer{TakeoverAccess: acc, View: a.views.mint(r.PathValue("id"), acc)})
	}
}

// takeoverAnswer is the takeover's access, with the path of its browser
// view when noVNC is installed.
type takeoverAnswer struct {
	engine.TakeoverAccess
	View string `json:"view,omitempty"`
}

// handBack ends the takeover; the run looks at what changed and resumes.
func (a *api) handBack(w http.ResponseWriter, r *http.Request, t Watched) {
	to, ok := takeoverOf(w, r, t)
	if !ok {
		return
	}
	if err := to.HandBack(); err != nil {
		writeError(w, http.StatusConflict, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"handed_back": true})
}

// takeoverOperations documents the takeover's routes.
var takeoverOperations = map[string]operation{
	"POST /v1/runs/{id}/takeover": {id: "takeOverRun",
		summary: "Take the run's desktop over (kasmrt run --takeover): the run pauses at its next turn, or at once while the model's question waits for an answer, and a VNC server serves its display on a loopback address. The answer comes once the server listens, and carries its one-time password; a takeover in progress is answered with its own. A question that waits goes on waiting: answer it during the takeover or after; the run goes on after the hand-back.",
		responses: map[string]any{
			"200": jsonResp("where to connect a VNC viewer, and the one-time password; view is the path of the takeover in a browser (noVNC), valid while it lasts, when noVNC is installed", obj(map[string]any{
				"addr": strSchema, "url": strSchema, "password": strSchema, "view": strSchema}, "addr", "url", "password")),
			"400": errResp("a body that is not an empty JSON object"),
			"404": errResp("no run with this id"),
			"409": errResp("the run was not started with --takeover, or it is over"),
			"503": errResp("the VNC server could not be started"),
		}},
	"POST /v1/runs/{id}/handback": {id: "handBackRun",
		summary: "Hand the desktop back: the run captures the screen, records what changed (takeover.ended) and resumes, telling the model. Closing the VNC viewer does the same.",
		responses: map[string]any{
			"202": jsonResp("the desktop is being handed back", obj(map[string]any{"handed_back": map[string]any{"type": "boolean"}}, "handed_back")),
			"400": errResp("a body that is not an empty JSON object"),
			"404": errResp("no run with this id"),
			"409": errResp("the run was not started with --takeover, or its desktop is not taken over"),
		}},
}
