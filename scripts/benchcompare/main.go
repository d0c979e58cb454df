// Command benchcompare measures kasmrt side by side with the tools an agent
// would otherwise use, in one run on the same application and screen, and
// prints the table docs/benchmarks.md shows between its bench-compare
// markers. scripts/bench-compare.sh installs what it needs and runs it.
//
//   - an agent step against xterm on one 1280x800 Xvfb: kasmrt's press_key
//     then observe_screen through `kasmrt mcp`, against xdotool, scrot and
//     convert run as processes, with and without the fixed 2 s settle sleep
//     of computer-use reference loops;
//   - navigate, click, fill and screenshot on one local page: kasmrt's cdp_*
//     tools and observe_screen through `kasmrt mcp`, against Playwright MCP
//     driving the same Debian Chromium, each through its MCP interface,
//     both headless and then both headful on an Xvfb;
//   - on a headless sway: a capture as PNG against grim, and a key until
//     the screen settled against wtype then grim;
//   - one sixel frame of the console against img2sixel, from the Go
//     benchmarks of tui/graphics.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kasmrt/kasmrt/drivers/x11"
)

func main() {
	kasmrt := flag.String("kasmrt", "bin/kasmrt", "the kasmrt binary")
	playwright := flag.String("playwright", "", "Playwright MCP's cli.js; empty skips the browser comparison")
	chromium := flag.String("chromium", "/usr/bin/chromium", "the Chromium both browser paths drive")
	convert := flag.String("convert", "/usr/bin/convert", "ImageMagick's convert")
	steps := flag.Int("n", 20, "iterations of each measured step")
	sleepSteps := flag.Int("sleep-n", 3, "iterations of the step with the 2 s settle sleep")
	only := flag.String("only", "", "run one part: x11, browser, wayland, sixel or agent-step")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var rows []row
	parts := []struct {
		name string
		run  func(context.Context) ([]row, error)
	}{
		{"x11", func(ctx context.Context) ([]row, error) {
			return compareX11(ctx, *kasmrt, *convert, *steps, *sleepSteps)
		}},
		{"browser", func(ctx context.Context) ([]row, error) {
			if *playwright == "" {
				return nil, errors.New("no -playwright given")
			}
			return compareBrowser(ctx, *kasmrt, *playwright, *chromium, *steps)
		}},
		{"wayland", func(ctx context.Context) ([]row, error) { return compareWayland(ctx, *steps) }},
		{"sixel", compareSixel},
		{"agent-step", func(ctx context.Context) ([]row, error) { return compareAgentStep(ctx, 4) }},
	}
	failed := false
	for _, p := range parts {
		if *only != "" && *only != p.name {
			continue
		}
		fmt.Fprintf(os.Stderr, "benchcompare: %s…\n", p.name)
		r, err := p.run(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchcompare: %s: %v\n", p.name, err)
			failed = true
			continue
		}
		rows = append(rows, r...)
	}
	printTable(os.Stdout, rows, *steps)
	if failed {
		os.Exit(1)
	}
}

// row is one line of the table: what, kasmrt's median, the other tool's
// median and the command that reproduces it.
type row struct {
	what, other  string
	kasmrt, them time.Duration
	// p95, when set, is shown after kasmrt's median.
	p95       time.Duration
	reproduce string
}

func printTable(w *os.File, rows []row, n int) {
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "Measured %s by `make bench-compare` (medians of %d unless the row says; load average %s). "+
		"The ratio is the other tool's figure over kasmrt's: above 1, kasmrt is faster.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), n, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintln(w, "| what | kasmrt | other | other's figure | ratio | reproduce |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio := "—"
		if r.kasmrt > 0 && r.them > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(r.them)/float64(r.kasmrt))
		}
		ours := ms(r.kasmrt)
		if r.p95 > 0 {
			ours += ", p95 " + ms(r.p95)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | `%s` |\n", r.what, ours, r.other, ms(r.them), ratio, r.reproduce)
	}
}

func ms(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	f := float64(d.Microseconds()) / 1000
	switch {
	case f >= 1000:
		return fmt.Sprintf("%.2f s", f/1000)
	case f >= 100:
		return fmt.Sprintf("%.0f ms", f)
	default:
		return fmt.Sprintf("%.1f ms", f)
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// quantile is the q-quantile of d (the nearest rank below).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*q)]
}

// timed runs f n times and returns the median.
func timed(n int, f func(i int) error) (time.Duration, error) {
	d, err := runs(n, f)
	return median(d), err
}

// runs runs f n times and returns how long each run took.
func runs(n int, f func(i int) error) ([]time.Duration, error) {
	d := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		if err := f(i); err != nil {
			return nil, err
		}
		d = append(d, time.Since(start))
	}
	return d, nil
}

// kasmrtMCP starts `kasmrt mcp` on a scenarios folder and opens a session
// on one of its scenarios.
type kasmrtMCP struct {
	cs      *mcp.ClientSession
	session string
}

func openKasmrt(ctx context.Context, bin, dir, scenario string, env []string) (*kasmrtMCP, error) {
	args := []string{"mcp", "--scenarios", dir, "--reports", filepath.Join(dir, "reports")}
	if _, err := os.Stat(filepath.Join(dir, "operator.yaml")); err == nil {
		args = append(args, "-o", filepath.Join(dir, "operator.yaml"))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "benchcompare", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("start kasmrt mcp: %w", err)
	}
	text, err := call(ctx, cs, "open_session", map[string]any{"scenario": scenario})
	if err != nil {
		cs.Close()
		return nil, err
	}
	m := regexp.MustCompile(`"session":\s*"([^"]+)"`).FindStringSubmatch(text)
	if m == nil {
		cs.Close()
		return nil, fmt.Errorf("open_session said %s", text)
	}
	return &kasmrtMCP{cs: cs, session: m[1]}, nil
}

// call calls an MCP tool and returns its text; a tool error is an error.
func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if res.IsError {
		return text, fmt.Errorf("%s: %s", name, text)
	}
	return text, nil
}

func (k *kasmrtMCP) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	a := map[string]any{"session": k.session}
	for key, v := range args {
		a[key] = v
	}
	return call(ctx, k.cs, tool, a)
}

func (k *kasmrtMCP) close(ctx context.Context) {
	_, _ = call(ctx, k.cs, "close_session", map[string]any{"session": k.session})
	k.cs.Close()
}

// xtermScenario fills the screen with text, so captures have real work, and
// echoes each key it is sent.
const xtermScenario = `name: bench-compare xterm
goal: Type letters.
app:
  command: [xterm, -class, KasmBench, -geometry, 200x60+0+0, -e, sh, -c, 'ls -l /usr/lib | head -50; exec cat']
  window: {class: KasmBench}
  startup_timeout_s: 20
`

// compareX11 measures one agent step (a key, then the screen it led to)
// both ways on the same xterm.
func compareX11(ctx context.Context, bin, convert string, n, sleepN int) ([]row, error) {
	sess, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		return nil, fmt.Errorf("start Xvfb: %w", err)
	}
	defer sess.Close()
	// A standing client keeps Xvfb from resetting between clients.
	keep, err := x11.Dial(sess.Display())
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", sess.Display(), err)
	}
	defer keep.Close()
	dir, err := os.MkdirTemp("", "kasmrt-bench-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	operator := fmt.Sprintf("session:\n  display: %q\n  accessibility: false\n", sess.Display())
	if err := writeFiles(dir, map[string]string{"xterm.yaml": xtermScenario, "operator.yaml": operator}); err != nil {
		return nil, err
	}
	k, err := openKasmrt(ctx, bin, dir, "xterm.yaml", nil)
	if err != nil {
		return nil, err
	}
	defer k.close(ctx)
	if _, err := k.call(ctx, "observe_screen", nil); err != nil {
		return nil, err
	}
	act, look := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	stepMedian, err := timed(n, func(int) error {
		start := time.Now()
		if _, err := k.call(ctx, "press_key", map[string]any{"key": "a"}); err != nil {
			return err
		}
		mid := time.Now()
		_, err := k.call(ctx, "observe_screen", nil)
		act, look = append(act, mid.Sub(start)), append(look, time.Since(mid))
		return err
	})
	if err != nil {
		return nil, err
	}

	// The same step as a process per action, on the same xterm, which
	// kasmrt focused: the key, optionally the sleep, a capture, and the
	// conversion a reference loop makes before it sends the screen.
	shot, out := filepath.Join(dir, "shot.png"), filepath.Join(dir, "out.png")
	env := append(os.Environ(), "DISPLAY="+sess.Display())
	run := func(argv ...string) error {
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		c.Env = env
		if b, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", argv[0], err, b)
		}
		return nil
	}
	processStep := func(sleep time.Duration) func(int) error {
		return func(int) error {
			if err := run("xdotool", "key", "b"); err != nil {
				return err
			}
			time.Sleep(sleep)
			if err := run("scrot", "--overwrite", "--silent", shot); err != nil {
				return err
			}
			if err := run(convert, shot, "-resize", "1280x800", out); err != nil {
				return err
			}
			_, err := os.ReadFile(out)
			return err
		}
	}
	procMedian, err := timed(n, processStep(0))
	if err != nil {
		return nil, err
	}
	sleepMedian, err := timed(sleepN, processStep(2*time.Second))
	if err != nil {
		return nil, err
	}
	cmd := "make bench-compare"
	return []row{
		{what: "agent step on xterm 1280x800: key, then the screen", other: "xdotool + scrot + convert", kasmrt: stepMedian, them: procMedian, reproduce: cmd},
		{what: "the same step, reference loop's 2 s settle sleep", other: fmt.Sprintf("xdotool + sleep 2 + scrot + convert (median of %d)", sleepN), kasmrt: stepMedian, them: sleepMedian, reproduce: cmd},
		{what: "of the step: press_key to settled screen", other: "—", kasmrt: median(act), p95: quantile(act, 0.95), reproduce: cmd},
		{what: "of the step: observe_screen", other: "—", kasmrt: median(look), p95: quantile(look, 0.95), reproduce: cmd},
	}, nil
}

// benchPages serves the page both browser paths work on: a link to its
// twin, a button that counts its clicks and a text field.
func benchPages() (base string, stop func(), err error) {
	mux := http.NewServeMux()
	for _, p := range []string{"a", "b"} {
		mux.HandleFunc("/"+p, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><html><head><title>Page %s</title>
<style>body{font:16px sans-serif;margin:20px}</style></head><body>
<h1>Page %s</h1>
<button id="add" aria-label="Add one" onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">Add one</button>
<span id="count">0</span>
<p><label for="name">Name</label> <input id="name"></p>
<p>%s</p></body></html>`, p, p, strings.Repeat("Some text to render. ", 200))
		})
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	return "http://" + l.Addr().String(), func() { srv.Close() }, nil
}

const fillValue = "0123456789"

// browserFigures are one tool's medians on the page, and its slowest
// navigation.
type browserFigures struct {
	nav, navWorst, click, fill, shot time.Duration
}

// compareBrowser measures navigate, click, fill and screenshot through
// kasmrt's MCP tools and through Playwright MCP's, both headless, then
// navigate, click and screenshot with both browsers headful on an Xvfb,
// where kasmrt captures the window from the X screen.
func compareBrowser(ctx context.Context, bin, playwright, chromium string, n int) ([]row, error) {
	base, stop, err := benchPages()
	if err != nil {
		return nil, err
	}
	defer stop()
	kHeadless, err := kasmrtBrowser(ctx, bin, base, true, n)
	if err != nil {
		return nil, err
	}
	pHeadless, err := playwrightBrowser(ctx, playwright, chromium, base, "", n)
	if err != nil {
		return nil, err
	}
	kHeadful, err := kasmrtBrowser(ctx, bin, base, false, n)
	if err != nil {
		return nil, err
	}
	sess, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		return nil, fmt.Errorf("start Xvfb for Playwright: %w", err)
	}
	defer sess.Close()
	pHeadful, err := playwrightBrowser(ctx, playwright, chromium, base, sess.Display(), n)
	if err != nil {
		return nil, err
	}
	repro := "make bench-compare"
	other := "Playwright MCP "
	worst := fmt.Sprintf(", the slowest of %d", n)
	return []row{
		{what: "navigate (`cdp_navigate`, with its settled screen)", other: other + "`browser_navigate` (with its snapshot)", kasmrt: kHeadless.nav, them: pHeadless.nav, reproduce: repro},
		{what: "navigate" + worst, other: other + "`browser_navigate`" + worst, kasmrt: kHeadless.navWorst, them: pHeadless.navWorst, reproduce: repro},
		{what: "click (`cdp_click`, with its settled screen)", other: other + "`browser_click` (with its snapshot)", kasmrt: kHeadless.click, them: pHeadless.click, reproduce: repro},
		{what: "fill 10 characters (`cdp_fill`, key events)", other: other + "`browser_type` (fill)", kasmrt: kHeadless.fill, them: pHeadless.fill, reproduce: repro},
		{what: "screenshot (`observe_screen`, PNG)", other: other + "`browser_take_screenshot` (PNG)", kasmrt: kHeadless.shot, them: pHeadless.shot, reproduce: repro},
		{what: "headful on Xvfb: navigate (the window captured from the X screen once drawn and still)", other: other + "headful `browser_navigate`", kasmrt: kHeadful.nav, them: pHeadful.nav, reproduce: repro},
		{what: "headful on Xvfb: navigate" + worst, other: other + "headful `browser_navigate`" + worst, kasmrt: kHeadful.navWorst, them: pHeadful.navWorst, reproduce: repro},
		{what: "headful on Xvfb: click (`cdp_click`, with its settled screen)", other: other + "headful `browser_click`", kasmrt: kHeadful.click, them: pHeadful.click, reproduce: repro},
		{what: "headful on Xvfb: screenshot (`observe_screen`)", other: other + "headful `browser_take_screenshot`", kasmrt: kHeadful.shot, them: pHeadful.shot, reproduce: repro},
	}, nil
}

// kasmrtBrowser measures the cdp_* tools and observe_screen through
// `kasmrt mcp` on a browser the session launches, headless or headful on
// the session's own Xvfb.
func kasmrtBrowser(ctx context.Context, bin, base string, headless bool, n int) (browserFigures, error) {
	var f browserFigures
	dir, err := os.MkdirTemp("", "kasmrt-bench-compare-")
	if err != nil {
		return f, err
	}
	defer os.RemoveAll(dir)
	scenario := fmt.Sprintf(`name: bench-compare page
goal: Work the page.
browser:
  mode: launch
  headless: %[3]t
  start_url: %[1]s/a
cdp_targets:
  add: "#add"
  name: "#name"
cdp_urls:
  a: %[1]s/a
  b: %[1]s/b
provides:
  value: %[2]q
`, base, fillValue, headless)
	if err := writeFiles(dir, map[string]string{"page.yaml": scenario, "operator.yaml": "session:\n  accessibility: false\n"}); err != nil {
		return f, err
	}
	k, err := openKasmrt(ctx, bin, dir, "page.yaml", nil)
	if err != nil {
		return f, err
	}
	defer k.close(ctx)
	navs, err := runs(n, func(i int) error {
		_, err := k.call(ctx, "cdp_navigate", map[string]any{"target": []string{"b", "a"}[i%2]})
		return err
	})
	if err != nil {
		return f, err
	}
	f.nav, f.navWorst = median(navs), slices.Max(navs)
	if f.click, err = timed(n, func(int) error {
		_, err := k.call(ctx, "cdp_click", map[string]any{"target": "add"})
		return err
	}); err != nil {
		return f, err
	}
	if f.fill, err = timed(n, func(int) error {
		_, err := k.call(ctx, "cdp_fill", map[string]any{"target": "name", "ref": "value"})
		return err
	}); err != nil {
		return f, err
	}
	if f.shot, err = timed(n, func(int) error {
		_, err := k.call(ctx, "observe_screen", nil)
		return err
	}); err != nil {
		return f, err
	}
	return f, nil
}

// playwrightBrowser measures Playwright MCP's browser_* tools on the same
// page: headless when display is empty, else headful on that display.
func playwrightBrowser(ctx context.Context, playwright, chromium, base, display string, n int) (browserFigures, error) {
	var f browserFigures
	dir, err := os.MkdirTemp("", "kasmrt-bench-compare-")
	if err != nil {
		return f, err
	}
	defer os.RemoveAll(dir)
	args := []string{playwright, "--no-sandbox", "--isolated", "--executable-path", chromium,
		"--viewport-size", "1280x800", "--output-dir", filepath.Join(dir, "playwright")}
	if display == "" {
		args = append(args, "--headless")
	}
	cmd := exec.Command("node", args...)
	if display != "" {
		cmd.Env = append(os.Environ(), "DISPLAY="+display)
	}
	cmd.Stderr = os.Stderr
	pw, err := mcp.NewClient(&mcp.Implementation{Name: "benchcompare", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return f, fmt.Errorf("start Playwright MCP: %w", err)
	}
	defer pw.Close()
	var snapshot string
	navs, err := runs(n, func(i int) error {
		var err error
		snapshot, err = call(ctx, pw, "browser_navigate", map[string]any{"url": base + []string{"/b", "/a"}[i%2]})
		return err
	})
	if err != nil {
		return f, err
	}
	f.nav, f.navWorst = median(navs), slices.Max(navs)
	// Playwright MCP may put the snapshot in a file and link it.
	if m := regexp.MustCompile(`\[Snapshot\]\(([^)]+)\)`).FindStringSubmatch(snapshot); m != nil {
		b, err := os.ReadFile(m[1])
		if err != nil {
			return f, fmt.Errorf("read Playwright's snapshot: %w", err)
		}
		snapshot = string(b)
	}
	refOf := func(role, name string) (string, error) {
		m := regexp.MustCompile(role + ` "` + name + `"[^\n]*\[ref=([^\]]+)\]`).FindStringSubmatch(snapshot)
		if m == nil {
			return "", fmt.Errorf("no %s %q in Playwright's snapshot:\n%s", role, name, snapshot)
		}
		return m[1], nil
	}
	addRef, err := refOf("button", "Add one")
	if err != nil {
		return f, err
	}
	nameRef, err := refOf("textbox", "Name")
	if err != nil {
		return f, err
	}
	if f.click, err = timed(n, func(int) error {
		_, err := call(ctx, pw, "browser_click", map[string]any{"element": "Add one button", "target": addRef})
		return err
	}); err != nil {
		return f, err
	}
	if f.fill, err = timed(n, func(int) error {
		_, err := call(ctx, pw, "browser_type", map[string]any{"element": "Name text field", "target": nameRef, "text": fillValue})
		return err
	}); err != nil {
		return f, err
	}
	if f.shot, err = timed(n, func(int) error {
		_, err := call(ctx, pw, "browser_take_screenshot", map[string]any{"type": "png", "scale": "css"})
		return err
	}); err != nil {
		return f, err
	}
	return f, nil
}

// compareSixel runs the console's sixel benchmarks against img2sixel's.
func compareSixel(ctx context.Context) ([]row, error) {
	args := []string{"test", "./tui/graphics", "-run", "^$", "-bench", "Sixel", "-benchtime", "20x", "-count", "1"}
	out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, out)
	}
	nsop := map[string]time.Duration{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" {
			continue
		}
		name := f[0][:strings.LastIndex(f[0], "-")]
		v, err := strconv.ParseFloat(f[2], 64)
		if err == nil {
			nsop[name] = time.Duration(v)
		}
	}
	repro := "go test ./tui/graphics -run '^$' -bench Sixel -benchtime 20x"
	var rows []row
	for _, frame := range []string{"640x400", "1280x800"} {
		ours := nsop["BenchmarkSixel/frame-"+frame+".png/adaptive"]
		theirs := nsop["BenchmarkImg2Sixel/frame-"+frame+".png/scale"]
		if ours == 0 || theirs == 0 {
			return nil, fmt.Errorf("no sixel figures for %s in:\n%s", frame, out)
		}
		rows = append(rows, row{what: "sixel frame for a 100x30-cell pane from a " + frame + " screen (warm encoder)",
			other: "`img2sixel -w W -h H` (a process)", kasmrt: ours, them: theirs, reproduce: repro})
	}
	return rows, nil
}

func writeFiles(dir string, files map[string]string) error {
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	return nil
}
