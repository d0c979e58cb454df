package model

import (
	"fmt"
	"net/url"
	"strings"
)

// endpointPath is the path suffix of each protocol's endpoint below /v1.
func endpointPath(p Protocol) string {
	if p == Responses {
		return "/responses"
	}
	return "/chat/completions"
}

// ResolveEndpoint turns an operator-supplied endpoint into the full URL for
// the protocol. It accepts a service base (http://host:port), a /v1 base or
// the full endpoint URL of the protocol. A full URL of the other protocol,
// a non-HTTP scheme and embedded credentials are errors. Errors never repeat
// the URL, which may carry secrets in its query.
func ResolveEndpoint(raw string, p Protocol) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("parse model endpoint: invalid URL")
	}
	if u.User != nil {
		return "", fmt.Errorf("model endpoint must not embed credentials (user:password@); pass the key separately")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("model endpoint must be an http or https URL")
	}
	if u.Host == "" {
		return "", fmt.Errorf("model endpoint has no host")
	}
	if u.RawQuery != "" || u.ForceQuery {
		// A query is where keys hide (?api_key=…): refuse it like
		// user:password rather than send it and echo it in errors.
		return "", fmt.Errorf("model endpoint must not have a query string (it may carry credentials); pass the key separately")
	}
	if u.Fragment != "" {
		return "", fmt.Errorf("model endpoint must not have a fragment")
	}
	path := strings.TrimRight(u.Path, "/")
	own := endpointPath(p)
	other := endpointPath(ChatCompletions)
	otherProto := ChatCompletions
	if p == ChatCompletions {
		other, otherProto = endpointPath(Responses), Responses
	}
	switch {
	case strings.HasSuffix(path, own):
		// Already the full endpoint.
	case strings.HasSuffix(path, other):
		return "", fmt.Errorf("model endpoint is a %s URL but the profile speaks %s", otherProto, p)
	case strings.HasSuffix(path, "/v1"):
		path += own
	default:
		path += "/v1" + own
	}
	u.Path = path
	u.RawPath = ""
	return u.String(), nil
}
