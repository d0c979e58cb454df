package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/internal/httpguard"
)

// MaxBodyBytes caps every request body: a tool call's arguments are a few
// names and numbers.
const MaxBodyBytes = 1 << 20

// HTTPOptions configure the server's HTTP surface.
type HTTPOptions struct {
	// Token is the bearer token every request needs; "" serves without
	// one, which the command allows on a loopback address only.
	Token string
	// Public is set when the address is not loopback: the MCP handler's
	// localhost-only Host check is then replaced by the token.
	Public bool
	// Listen is the address the server was told to listen on (host:port);
	// a request's Host must name it, the address it reached or localhost
	// (httpguard.Guard).
	Listen  string
	Version string
}

// NewHandler serves the manager's sessions: MCP's streamable HTTP
// transport at /mcp and the HTTP API under /v1 (OpenAPI()). What a web
// page could make a browser send is refused first (httpguard.Guard: a
// rebound Host, another origin, a POST that is not JSON); a token in the
// query string is refused, never accepted; bodies over MaxBodyBytes get
// 413.
func NewHandler(m *Manager, o HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewMCPServer(m, o.Version) },
		&mcp.StreamableHTTPOptions{
			MaxRequestBodyBytes:          MaxBodyBytes,
			PropagateRequestCancellation: true,
			DisableLocalhostProtection:   o.Public,
		})
	mux.Handle("/mcp", limitOpens(m, mcpHandler))
	mountAPI(mux, m)
	var h http.Handler = mux
	if o.Token != "" {
		h = inbox.RequireBearer(o.Token, "kasmrt", mux)
	}
	return httpguard.Guard(o.Listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for _, k := range []string{"token", "access_token", "auth", "key"} {
			if q.Has(k) {
				writeError(w, http.StatusBadRequest, "credentials are never taken from the query string; send Authorization: Bearer")
				return
			}
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		h.ServeHTTP(w, r)
	}))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// retryAfter is the Retry-After, in seconds, of an open refused because
// --max-sessions are open: about what a session's launch and a short task
// take.
const retryAfter = "30"

// limitOpens answers an MCP open_session with 503 and Retry-After while
// the manager is full, as POST /v1/sessions is answered, so an HTTP
// client backs off instead of reading an error as its task's failure.
// The SDK's clients take a 503 as transient: the MCP session lives on.
func limitOpens(m *Manager, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !m.Full() {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err != nil || json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" || msg.Params.Name != "open_session" || msg.ID == nil {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID,
			"error": map[string]any{"code": -32000, "message": ErrTooMany.Error()}})
	})
}
