package graphics

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
)

// Environ looks up an environment variable; os.Getenv satisfies it, and
// tests pass a map's lookup.
type Environ func(key string) string

// Probe strings the console may write with tea.Raw to ask the terminal what
// it can draw. Terminals answer DA1 always, so sending DA1Query last marks
// the end of the replies: once the DA1 reply has arrived, a kitty reply that
// has not arrived is not coming.
const (
	// KittyQuery asks for a kitty graphics reply with image id 31; a
	// terminal that supports the protocol answers "ESC_Gi=31;OK ESC\".
	KittyQuery = "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"
	// DA1Query asks for the primary device attributes ("ESC[?...c");
	// attribute 4 means sixel.
	DA1Query = "\x1b[c"
	// Probe is both queries in the order the console should send them.
	Probe = KittyQuery + DA1Query
)

// kittyQueryID is the image id KittyQuery uses.
const kittyQueryID = 31

// Reply is one terminal answer to a probe, as far as detection cares.
type Reply struct {
	// DA1 holds the primary device attributes when the reply was a DA1
	// report (nil otherwise).
	DA1 []int
	// Kitty reports that the reply was the kitty graphics answer to
	// KittyQuery, and KittyOK that it said OK.
	Kitty, KittyOK bool
}

// ParseDA1 reads a primary device attributes reply such as "ESC[?62;4;22c".
func ParseDA1(b []byte) ([]int, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("\x1b[?"))
	if !ok || len(rest) == 0 || rest[len(rest)-1] != 'c' {
		return nil, false
	}
	var attrs []int
	for _, f := range bytes.Split(rest[:len(rest)-1], []byte(";")) {
		n, err := strconv.Atoi(string(f))
		if err != nil {
			return nil, false
		}
		attrs = append(attrs, n)
	}
	return attrs, true
}

// ParseKittyReply reads a kitty graphics reply such as "ESC_Gi=31;OK ESC\"
// and returns its image id and whether the message was OK; valid is false
// when b is not a kitty graphics reply at all.
func ParseKittyReply(b []byte) (id int, ok, valid bool) {
	rest, found := bytes.CutPrefix(b, []byte("\x1b_G"))
	if !found {
		return 0, false, false
	}
	rest, found = bytes.CutSuffix(rest, []byte("\x1b\\"))
	if !found {
		return 0, false, false
	}
	keys, msg, _ := bytes.Cut(rest, []byte(";"))
	for _, kv := range bytes.Split(keys, []byte(",")) {
		if v, isID := bytes.CutPrefix(kv, []byte("i=")); isID {
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return 0, false, false
			}
			id = n
		}
	}
	return id, string(msg) == "OK", true
}

// ParseReply reads one raw probe reply (DA1 or kitty graphics).
func ParseReply(b []byte) (Reply, bool) {
	if attrs, ok := ParseDA1(b); ok {
		return Reply{DA1: attrs}, true
	}
	if id, ok, valid := ParseKittyReply(b); valid && id == kittyQueryID {
		return Reply{Kitty: true, KittyOK: ok}, true
	}
	return Reply{}, false
}

// ReplyFromMsg recognises the messages Bubble Tea v2 delivers for probe
// replies. Bubble Tea v2.1 passes them through untranslated as ultraviolet
// events: uv.PrimaryDeviceAttributesEvent for DA1 and uv.KittyGraphicsEvent
// for the kitty answer.
func ReplyFromMsg(msg any) (Reply, bool) {
	switch m := msg.(type) {
	case uv.PrimaryDeviceAttributesEvent:
		return Reply{DA1: append([]int{}, m...)}, true
	case uv.KittyGraphicsEvent:
		if m.Options.ID != kittyQueryID {
			return Reply{}, false
		}
		return Reply{Kitty: true, KittyOK: string(m.Payload) == "OK"}, true
	}
	return Reply{}, false
}

// ShouldProbe reports whether the console may send Probe. It is false where a
// probe is known or likely to print garbage or hang unanswered: dumb
// terminals, the Linux console, Apple Terminal, and any terminal this
// package does not recognise ("when unsure, do not ask"). The console must
// also not probe when the operator forced a mode with --graphics.
func ShouldProbe(env Environ) bool {
	term := env("TERM")
	switch {
	case term == "" || term == "dumb" || term == "linux":
		return false
	case env("TERM_PROGRAM") == "Apple_Terminal":
		return false
	}
	if knownTerminal(env) != "" {
		return true
	}
	for _, prefix := range []string{"xterm", "foot", "alacritty", "tmux", "screen", "st-", "mlterm", "contour", "rio", "wezterm", "ghostty", "kitty"} {
		if strings.HasPrefix(term, prefix) {
			return true
		}
	}
	return false
}

// knownTerminal names the terminal from variables only it sets, or "".
func knownTerminal(env Environ) string {
	term, program := env("TERM"), strings.ToLower(env("TERM_PROGRAM"))
	switch {
	case env("KITTY_WINDOW_ID") != "" || term == "xterm-kitty":
		return "kitty"
	case env("GHOSTTY_RESOURCES_DIR") != "" || env("GHOSTTY_BIN_DIR") != "" || program == "ghostty" || term == "xterm-ghostty":
		return "ghostty"
	case env("WEZTERM_EXECUTABLE") != "" || env("WEZTERM_PANE") != "" || program == "wezterm":
		return "wezterm"
	case program == "iterm.app":
		return "iterm2"
	case strings.HasPrefix(term, "foot"):
		return "foot"
	case strings.HasPrefix(term, "mlterm"):
		return "mlterm"
	case program == "apple_terminal":
		return "apple"
	}
	return ""
}

// Detect chooses how to draw images from the environment and from any probe
// replies the console has received. Replies win over the environment: a
// kitty OK means Kitty, a DA1 with attribute 4 means Sixel. Without a reply
// it trusts only terminals that identify themselves (kitty and Ghostty draw
// kitty graphics with placeholders; WezTerm, foot, mlterm and iTerm2 draw
// sixel) and falls back to Blocks. Inside tmux the outer terminal's
// variables leak in but its graphics do not pass through on their own, so
// only replies count there. A dumb terminal or an unset TERM gets None, and
// NO_COLOR turns Blocks (coloured text) into None while leaving real image
// protocols alone.
func Detect(env Environ, replies ...Reply) Mode {
	term := env("TERM")
	if term == "" || term == "dumb" {
		return None
	}
	fallback := Blocks
	if env("NO_COLOR") != "" {
		fallback = None
	}
	var kitty, sixel bool
	for _, r := range replies {
		kitty = kitty || (r.Kitty && r.KittyOK)
		sixel = sixel || slices.Contains(r.DA1, 4)
	}
	switch {
	case kitty:
		return Kitty
	case sixel:
		return Sixel
	case env("TMUX") != "" || term == "linux":
		return fallback
	}
	switch knownTerminal(env) {
	case "kitty", "ghostty":
		return Kitty
	case "wezterm", "foot", "mlterm", "iterm2":
		return Sixel
	}
	return fallback
}
