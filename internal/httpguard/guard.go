// Package httpguard holds the checks every HTTP server kasmrt runs on the
// operator's machine makes before a request reaches its routes: kasmrt
// serve, kasmrt run --listen and the inbox's own listener (inbox.listen).
//
// These servers are reachable by any web page the operator's browser
// opens: a page can make the browser connect to 127.0.0.1 (cross-site
// requests) or rebind its own name to 127.0.0.1 (DNS rebinding). The
// bearer token stops both where one is set, but a loopback server may run
// without one. Guard refuses what a browser would send on such a page's
// behalf, so the token is not the only wall.
package httpguard

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Guard serves next only requests that a page of another site cannot
// make through the operator's browser:
//
//   - the Host header names this server: a loopback name or address, the
//     address the connection was accepted on, or listen (the configured
//     host:port) — a rebound name is refused;
//   - an Origin header, when there is one, is this server's own, and
//     Sec-Fetch-Site, when there is one, says same-origin or none (the
//     operator typed the URL);
//   - a POST, PUT or PATCH says its body is JSON (Content-Type
//     application/json): the types a page may send without the browser
//     asking the server first (text/plain, forms) are refused.
//
// listen may be "" when the server's address is always an IP address or
// localhost; the accepted connection's address then suffices. Refusals are
// JSON {"error": "..."}: 403 for Host and Origin, 415 for the body's type.
func Guard(listen string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !knownHost(r, listen) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("Host %q does not name this server; use its address (%s) or localhost", r.Host, serverAddr(r, listen)))
			return
		}
		if err := sameOrigin(r); err != nil {
			writeError(w, http.StatusForbidden, err.Error())
			return
		}
		if changesState(r.Method) && !isJSON(r.Header.Get("Content-Type")) {
			writeError(w, http.StatusUnsupportedMediaType, r.Method+" takes a JSON body: send Content-Type: application/json")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// knownHost reports whether r's Host header names this server.
func knownHost(r *http.Request, listen string) bool {
	if r.Host == "" {
		return false
	}
	if loopbackHost(hostOnly(r.Host)) {
		return true
	}
	if listen != "" && strings.EqualFold(r.Host, listen) && !unspecified(hostOnly(listen)) {
		return true
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return local != nil && strings.EqualFold(r.Host, local.String())
}

// serverAddr names the server's address in a refusal.
func serverAddr(r *http.Request, listen string) string {
	if local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr); local != nil {
		return local.String()
	}
	return listen
}

// hostOnly is a Host header's or address's host, without port or brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// loopbackHost reports whether host is localhost or a loopback address:
// names a browser resolves itself, which no page can rebind.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// unspecified reports whether host is a wildcard (0.0.0.0, ::, ""), which
// names no one server.
func unspecified(host string) bool {
	if host == "" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsUnspecified()
}

// Loopback reports whether a listen address (host:port) only takes local
// connections.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopbackHost(host)
}

// sameOrigin refuses a request a browser sent for a page of another
// origin. Requests without the headers (curl, kasmrt attach, an agent) are
// not a browser's and pass.
func sameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Errorf("a request from origin %q is refused: this server answers only its own origin", o)
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return nil
	default:
		return fmt.Errorf("a %s request is refused: this server answers only its own origin", site)
	}
}

// changesState reports whether a method may carry a body that changes
// something; DELETE needs no body and no browser sends it cross-origin
// without asking first.
func changesState(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// MinTokenBits is the least a token guarding a non-loopback address must
// hold: 32 hexadecimal or 22 base64 characters.
const MinTokenBits = 128

// TokenBits estimates a token's strength from its length and the kinds of
// characters in it, as if each character were drawn at random from every
// character of its kinds: hexadecimal digits with letters (16), or else lower-case
// letters (26), upper-case letters (26), digits (10) and other printable
// characters (33) as present. It cannot tell a guessable token of many
// characters from a random one; it catches the short ones.
func TokenBits(token string) float64 {
	if token == "" {
		return 0
	}
	var lower, upper, digit, other, hex bool
	hex = true
	for _, c := range token {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			hex = false
		}
	}
	alphabet := 16
	if !hex || !(lower || upper) {
		alphabet = 0
		for _, k := range []struct {
			present bool
			size    int
		}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 33}} {
			if k.present {
				alphabet += k.size
			}
		}
	}
	return float64(len([]rune(token))) * math.Log2(float64(alphabet))
}

// CheckToken refuses a token too weak to guard an address other machines
// can reach. what names where the token came from, for the message.
func CheckToken(what, token string) error {
	if bits := TokenBits(token); bits < MinTokenBits {
		return fmt.Errorf("%s is too short to guard an address other machines can reach: about %.0f bits, at least %d needed (32 hexadecimal characters: openssl rand -hex 16)", what, bits, MinTokenBits)
	}
	return nil
}

// CheckListen refuses what would leave a listener open to more than its
// operator: no token on an address other machines reach, or one too short
// to withstand guessing there. what names the setting (--listen,
// inbox.listen) and tokenName where its token comes from.
func CheckListen(what, addr, token, tokenName string) error {
	if Loopback(addr) {
		return nil
	}
	if token == "" {
		return fmt.Errorf("%s %s is not a loopback address: set a token (%s)", what, addr, tokenName)
	}
	return CheckToken(fmt.Sprintf("the token of %s %s (%s)", what, addr, tokenName), token)
}
