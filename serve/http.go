package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

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
	// MaxMCPSessions bounds the MCP transport sessions open at once (0:
	// DefaultMaxMCPSessions); MCPIdleTimeout closes one no request used
	// for that long (0: DefaultMCPIdleTimeout). A transport session is a
	// client's connection, not a kasmrt session: each holds an MCP server
	// of its own, so without a bound a client that only initializes grows
	// the server without end.
	MaxMCPSessions int
	MCPIdleTimeout time.Duration
}

const (
	// DefaultMaxMCPSessions is far more clients than --max-sessions lets
	// run at once, at about 100 KB each.
	DefaultMaxMCPSessions = 256
	// DefaultMCPIdleTimeout is well past serve's default --idle-timeout
	// (10 minutes), so the kasmrt sessions a forgotten connection opened
	// have closed with their reports before it expires. A client whose
	// connection expired gets 404 and initializes again, as the MCP
	// specification has it.
	DefaultMCPIdleTimeout = time.Hour
)

// NewHandler serves the manager's sessions: MCP's streamable HTTP
// transport at /mcp and the HTTP API under /v1 (OpenAPI()). What a web
// page could make a browser send is refused first (httpguard.Guard: a
// rebound Host, another origin, a POST that is not JSON); a token in the
// query string is refused, never accepted; bodies over MaxBodyBytes get
// 413.
func NewHandler(m *Manager, o HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	if o.MaxMCPSessions <= 0 {
		o.MaxMCPSessions = DefaultMaxMCPSessions
	}
	if o.MCPIdleTimeout <= 0 {
		o.MCPIdleTimeout = DefaultMCPIdleTimeout
	}
	transports := &mcpSessions{max: o.MaxMCPSessions, servers: map[*mcp.Server]bool{}}
	// Only a request that opens a transport session needs a server of its
	// own (transports.limit gives it one); the others' server is asked only
	// which protocol versions it speaks.
	versions := NewMCPServer(m, o.Version)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if srv, ok := r.Context().Value(newTransportKey{}).(*mcp.Server); ok {
			return srv
		}
		return versions
	}, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes:          MaxBodyBytes,
		PropagateRequestCancellation: true,
		DisableLocalhostProtection:   o.Public,
		SessionTimeout:               o.MCPIdleTimeout,
	})
	mux.Handle("/mcp", limitOpens(m, transports.limit(func() *mcp.Server { return NewMCPServer(m, o.Version) }, mcpHandler)))
	v := newViews()
	mountAPI(mux, m, v)
	var h http.Handler = mux
	if o.Token != "" {
		h = inbox.RequireBearer(o.Token, "kasmrt", mux)
	}
	// A takeover's browser view cannot send the token: its ticket, which
	// only the token could get, guards it (takeover_view.go).
	outer := http.NewServeMux()
	outer.Handle(viewPrefix, v.handler(m))
	outer.Handle("/", h)
	h = outer
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
		writeRPCBusy(w, msg.ID, ErrTooMany.Error())
	})
}

// writeRPCBusy answers a JSON-RPC request with 503, Retry-After and an
// error, which the SDK's clients take as transient.
func writeRPCBusy(w http.ResponseWriter, id json.RawMessage, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", retryAfter)
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32000, "message": msg}})
}

// newTransportKey carries, in a request's context, the MCP server a new
// transport session is to be served by.
type newTransportKey struct{}

// mcpSessions bounds the MCP transport sessions open at once. Each new
// one is served by an MCP server of its own, which is counted from the
// request that opens it until its session closes (a DELETE, the idle
// timeout, or at once when the request was not an initialize).
type mcpSessions struct {
	max int

	mu sync.Mutex
	// servers maps each counted server to whether the request opening its
	// session is still being served.
	servers map[*mcp.Server]bool
}

// ErrTooManyTransports refuses a new MCP transport session while the
// bound is reached.
var ErrTooManyTransports = errors.New("too many MCP connections are open: close one (DELETE /mcp) or wait for an idle one to expire")

// limit serves a request that opens a transport session (a POST without
// Mcp-Session-Id) with a server from newServer, or refuses it with 503
// while max are open.
func (s *mcpSessions) limit(newServer func() *mcp.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		srv := newServer()
		if !s.reserve(srv) {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&msg)
			writeRPCBusy(w, msg.ID, ErrTooManyTransports.Error())
			return
		}
		defer s.served(srv)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), newTransportKey{}, srv)))
	})
}

// reserve counts srv unless max servers already hold a session or are
// opening one.
func (s *mcpSessions) reserve(srv *mcp.Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for other, opening := range s.servers {
		if !opening && !hasSession(other) {
			delete(s.servers, other)
		}
	}
	if len(s.servers) >= s.max {
		return false
	}
	s.servers[srv] = true
	return true
}

// served ends srv's opening request: it stays counted while its session
// is open.
func (s *mcpSessions) served(srv *mcp.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hasSession(srv) {
		s.servers[srv] = false
	} else {
		delete(s.servers, srv)
	}
}

func hasSession(srv *mcp.Server) bool {
	for range srv.Sessions() {
		return true
	}
	return false
}
