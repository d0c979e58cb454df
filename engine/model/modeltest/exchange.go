package modeltest

import (
	"maps"
	"net/http"
	"strconv"
	"time"
)

// Exchange is one scripted HTTP reply. Build it with the functions below;
// the zero Exchange is an empty assistant reply.
type Exchange struct {
	status  int
	header  http.Header
	raw     string
	garbage bool
	text    string
	calls   []call
	usage   map[string]any
	delay   time.Duration
	inner   *Exchange
	fn      func(Request) Exchange
}

type call struct {
	id, name, args string
}

// Text replies with assistant text and no tool calls.
func Text(text string) Exchange { return Exchange{text: text} }

// Empty replies with a well-formed assistant message that has no text and
// no tool calls.
func Empty() Exchange { return Exchange{} }

// Call replies with one native tool call; its ID is call_N, numbered across
// the server's replies.
func Call(name, argsJSON string) Exchange {
	return Exchange{calls: []call{{name: name, args: argsJSON}}}
}

// CallID replies with one native tool call that has the given ID.
func CallID(id, name, argsJSON string) Exchange {
	return Exchange{calls: []call{{id: id, name: name, args: argsJSON}}}
}

// Calls replies with every call (and text) of the given exchanges in one
// turn, as a model that asks for several tools at once.
func Calls(exs ...Exchange) Exchange {
	var out Exchange
	for _, ex := range exs {
		out.calls = append(out.calls, ex.calls...)
		out.text += ex.text
	}
	return out
}

// Status replies with an HTTP error status and an OpenAI-style error body.
// A retryAfter, when given, is sent as Retry-After in whole seconds.
func Status(code int, retryAfter ...time.Duration) Exchange {
	ex := Exchange{status: code}
	if len(retryAfter) > 0 {
		ex = ex.WithHeader("Retry-After", strconv.Itoa(int(retryAfter[0].Seconds())))
	}
	return ex
}

// StatusBody replies with an HTTP status and exactly the given body.
func StatusBody(code int, body string) Exchange { return Exchange{status: code, raw: body} }

// Garbage replies 200 with exactly body, such as truncated JSON.
func Garbage(body string) Exchange { return Exchange{garbage: true, raw: body} }

// Delay waits d before sending ex; if the client gives up first (its
// timeout), nothing is sent.
func Delay(d time.Duration, ex Exchange) Exchange {
	return Exchange{delay: d, inner: &ex}
}

// Func computes the reply from the request, for answers that depend on
// what was asked (for example a point computed from the sent image).
func Func(fn func(Request) Exchange) Exchange { return Exchange{fn: fn} }

// WithText adds assistant text to a reply (for example next to a call).
func (ex Exchange) WithText(text string) Exchange {
	ex.text = text
	return ex
}

// WithUsage overrides or adds usage fields; nested objects are allowed.
func (ex Exchange) WithUsage(usage map[string]any) Exchange {
	u := maps.Clone(ex.usage)
	if u == nil {
		u = map[string]any{}
	}
	maps.Copy(u, usage)
	ex.usage = u
	return ex
}

// WithHeader adds a response header (for example an HTTP-date Retry-After).
func (ex Exchange) WithHeader(key, value string) Exchange {
	h := ex.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	ex.header = h
	return ex
}
