package scenarios

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NotifyConfig names where a new question is announced.
type NotifyConfig struct {
	Pos     Pos            `yaml:"-"`
	Webhook *WebhookConfig `yaml:"webhook"`
}

// WebhookConfig is an HTTP endpoint that receives a JSON notice of each
// question: its text and the URL to answer it at. Header values and the
// URL are credentials (a chat service's webhook URL is one): they are
// redacted from everything the run writes.
type WebhookConfig struct {
	Pos     Pos               `yaml:"-"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// TimeoutS bounds one notice; a receiver that takes longer is a
	// concern, not a wait.
	TimeoutS float64 `yaml:"timeout_s"`
}

// DefaultWebhookTimeoutS bounds a webhook notice when timeout_s is unset.
const DefaultWebhookTimeoutS = 5

// Timeout returns the notice's bound in seconds.
func (w *WebhookConfig) Timeout() float64 {
	if w.TimeoutS > 0 {
		return w.TimeoutS
	}
	return DefaultWebhookTimeoutS
}

// Credentials returns the operator file's secret values: the model key,
// the inbox tokens, and the credentials inside the webhook's URL and
// header values (see urlCredentials and headerCredentials; a model
// endpoint with credentials is refused at load). The run redacts them
// everywhere, whole and by their prefixes, removes every variable that
// holds one from its children's environment, and never stores them.
func (o *Operator) Credentials() []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	add(o.Model.Key, o.Inbox.SessionToken, o.Inbox.MessagingToken)
	if w := o.Inbox.Notify.Webhook; w != nil {
		add(urlCredentials(w.URL)...)
		for _, k := range sortedKeys(w.Headers) {
			add(headerCredentials(k, w.Headers[k])...)
		}
	}
	return out
}

// CredentialCarriers returns the operator file's texts that carry a
// credential among public words: the webhook's URL and its header values
// ("Bearer …"). They are redacted whole, never by their prefixes
// ("https://" is no secret), and a variable that holds one, or that one holds, is removed
// from the children's environment; the credentials inside them are
// Credentials.
func (o *Operator) CredentialCarriers() []string {
	var out []string
	if w := o.Inbox.Notify.Webhook; w != nil {
		if w.URL != "" {
			out = append(out, w.URL)
		}
		for _, k := range sortedKeys(w.Headers) {
			if v := w.Headers[k]; v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// credentialNameRE matches the name of a header or query parameter that
// holds a credential: Authorization, X-Api-Key, access_token, sig,
// passphrase…
var credentialNameRE = regexp.MustCompile(`(?i)auth|token|key|secret|sig|pass|pwd|cookie|session|credential|code`)

// tokenLike reports whether a piece of a URL or header whose name says
// nothing looks like a credential: six characters or more with a digit
// (T0A1B2C3, a hex digest), or sixteen or more of any kind (a long random
// path). Shorter words without digits ("services", "hooks", "json") are
// the public parts of an address, and masking them everywhere would hide
// ordinary text.
func tokenLike(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 16 || n >= 6 && strings.ContainsFunc(s, unicode.IsDigit)
}

// urlCredentials returns the credentials in a webhook's URL, itself a
// credential (hooks.slack.com/services/T…/B…/X…): the user and password of
// its userinfo (refused at load, but never left unmasked), every query
// value whose parameter's name names a credential (key, token, sig…), and
// every tokenLike query value, path segment or fragment.
func urlCredentials(raw string) []string {
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	query := func(q url.Values) {
		for _, k := range sortedKeys(q) {
			for _, v := range q[k] {
				if credentialNameRE.MatchString(k) || tokenLike(v) {
					out = append(out, v)
				}
			}
		}
	}
	query(u.Query())
	for _, seg := range strings.Split(u.Path, "/") {
		if tokenLike(seg) {
			out = append(out, seg)
		}
	}
	if u.Fragment != "" {
		if q, err := url.ParseQuery(u.Fragment); err == nil && strings.Contains(u.Fragment, "=") {
			query(q)
		} else if tokenLike(u.Fragment) {
			out = append(out, u.Fragment)
		}
	}
	return out
}

// headerCredentials returns the credentials in a header's value: the
// value whole when it is one word (X-Api-Key: k), the credentials after an
// authentication scheme (Bearer t, Basic b64 and the password it encodes,
// Digest response="…"), and the values of name=value parameters
// (t=…,v1=…). When the header's name does not name a credential (X-Team:
// qa), only tokenLike words count.
func headerCredentials(name, value string) []string {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	named := credentialNameRE.MatchString(name)
	words := strings.FieldsFunc(value, func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' })
	var out []string
	add := func(w string) {
		if w != "" && (named || tokenLike(w)) {
			out = append(out, w)
		}
	}
	if len(words) > 1 && authSchemeRE.MatchString(words[0]) {
		scheme := words[0]
		words = words[1:]
		// The rest after the scheme whole: a token68 with spaces around
		// it, or parameters as written.
		add(strings.TrimSpace(strings.TrimPrefix(value, scheme)))
		if strings.EqualFold(scheme, "Basic") && len(words) == 1 {
			if b, err := base64.StdEncoding.DecodeString(words[0]); err == nil {
				userpass := string(b)
				out = append(out, userpass)
				if _, pw, ok := strings.Cut(userpass, ":"); ok && pw != "" {
					out = append(out, pw)
				}
			}
		}
	}
	for _, w := range words {
		add(strings.Trim(w, `"`))
		// name=value, but not base64's padding (abc==).
		if k, v, ok := strings.Cut(w, "="); ok && k != "" && strings.Trim(v, "=") != "" {
			add(strings.Trim(v, `"`))
		}
	}
	return out
}

// authSchemeRE is an HTTP authentication scheme's name (Bearer, Basic,
// Digest, Bot…): letters, then letters, digits or dashes.
var authSchemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`)

// headerNameRE is an HTTP header name (RFC 9110's token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// webhook checks inbox.notify.webhook.
func (v *validator) webhook(o *Operator) {
	w := o.Inbox.Notify.Webhook
	if w == nil {
		return
	}
	const path = "inbox.notify.webhook"
	if w.URL == "" {
		v.failAt(path+".url", "a webhook needs url: the http or https address its notices are POSTed to")
	} else if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL may be a credential: it is never quoted back.
		v.failAt(path+".url", "want an http or https URL with a host")
	} else if u.User != nil {
		v.failAt(path+".url", "the URL embeds credentials; send them in headers (e.g. Authorization: Bearer ${HOOK_TOKEN})")
	}
	for _, name := range sortedKeys(w.Headers) {
		switch {
		case !headerNameRE.MatchString(name):
			v.failAt(path+".headers."+name, "not an HTTP header name")
		case slices.Contains([]string{"content-type", "content-length", "host"}, strings.ToLower(name)):
			v.failAt(path+".headers."+name, "%s is set by kasmrt itself", http.CanonicalHeaderKey(name))
		case strings.ContainsAny(w.Headers[name], "\r\n"):
			v.failAt(path+".headers."+name, "a header value is one line")
		}
	}
	if w.TimeoutS < 0 || w.TimeoutS > 30 {
		v.failAt(path+".timeout_s", "between 0 (the default, %d s) and 30 seconds: a question is never held up longer", DefaultWebhookTimeoutS)
	}
}
