package scenarios

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
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
// the inbox tokens and the webhook's URL and header values. The run
// redacts them everywhere and never stores them.
func (o *Operator) Credentials() []string {
	var out []string
	for _, v := range []string{o.Model.Key, o.Inbox.SessionToken, o.Inbox.MessagingToken} {
		if v != "" {
			out = append(out, v)
		}
	}
	if w := o.Inbox.Notify.Webhook; w != nil {
		if w.URL != "" {
			out = append(out, w.URL)
		}
		for _, k := range sortedKeys(w.Headers) {
			if v := w.Headers[k]; v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

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
