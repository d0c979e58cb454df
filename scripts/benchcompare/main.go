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
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
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
	steps := flag.Int("n", 20, "samples of each measured step, per tool")
	sleepSteps := flag.Int("sleep-n", 3, "samples of the step with the 2 s settle sleep")
	watchedRuns := flag.Int("watched-n", 6, "goal runs of each kind, headless and watched")
	only := flag.String("only", "", "run one part: x11, browser, wayland, sixel, watched or agent-step")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	parts := []part{
		{"x11", "an agent step on xterm, kasmrt against a process per action", func(ctx context.Context) ([]row, error) {
			return compareX11(ctx, *kasmrt, *convert, *steps, *sleepSteps)
		}},
		{"browser", "a local page through each tool's MCP interface, headless, then headful on an Xvfb", func(ctx context.Context) ([]row, error) {
			if *playwright == "" {
				return nil, errors.New("no -playwright given")
			}
			return compareBrowser(ctx, *kasmrt, *playwright, *chromium, *steps)
		}},
		{"wayland", "the Wayland desktop's screen and key, kasmrt against grim and wtype", func(ctx context.Context) ([]row, error) { return compareWayland(ctx, *steps) }},
		{"sixel", "the console's sixel encoder against img2sixel", func(ctx context.Context) ([]row, error) { return compareSixel(ctx, *steps) }},
		{"watched", "a goal run headless against the same run watched in the live console", func(ctx context.Context) ([]row, error) {
			return compareWatched(ctx, *kasmrt, *watchedRuns)
		}},
		{"agent-step", "observe_screen in goal runs per model profile", func(ctx context.Context) ([]row, error) { return compareAgentStep(ctx, 4) }},
	}
	fmt.Printf("Measured %s by `make bench-compare` on %s. Samples of the two tools alternate (A, B, A, B …), "+
		"so a change in the machine's load falls on both; each table gives the load average (1, 5, 15 min) before and after it. "+
		"Figures are medians, with the 95th percentile (p95) where a row has enough samples; the ratio is the other's median over kasmrt's: above 1, kasmrt is faster.\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), machine())
	failed := false
	for _, p := range parts {
		if *only != "" && *only != p.name {
			continue
		}
		fmt.Fprintf(os.Stderr, "benchcompare: %s…\n", p.name)
		if !runPart(ctx, os.Stdout, p, *steps) {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// part is one comparison of the run: its rows, or why it could not be
// measured.
type part struct {
	name, title string
	run         func(context.Context) ([]row, error)
}

// runPart measures one part and prints its table at once, with the load
// average before and after; a part that fails prints why instead and the
// others go on. It reports whether the part succeeded.
func runPart(ctx context.Context, w io.Writer, p part, n int) bool {
	before := loadAverage()
	rows, err := p.run(ctx)
	after := loadAverage()
	fmt.Fprintf(w, "\n### %s: %s\n\nLoad average %s before, %s after.\n\n", p.name, p.title, before, after)
	if err != nil {
		fmt.Fprintf(w, "Not measured: %s\n", oneLine(err.Error()))
		fmt.Fprintf(os.Stderr, "benchcompare: %s: %v\n", p.name, err)
		return false
	}
	printTable(w, rows, n)
	return true
}

// oneLine keeps an error's first line and at most 300 characters, so a
// failing part's reason fits in the document.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// loadAverage is /proc/loadavg's three averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// machine names the CPU, its cores and the memory, from /proc.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%s, %d cores%s", cpu, runtime.NumCPU(), mem)
}

// row is one line of a table: what, kasmrt's figures, the other tool's
// and the command that reproduces it.
type row struct {
	what, other  string
	kasmrt, them time.Duration
	// p95 and themP95, when set, are shown after the medians.
	p95, themP95 time.Duration
	// ours and theirs, when set, replace the durations (a row of another
	// unit); ratio is then theirs over ours as given.
	ours, theirs string
	ratio        float64
	reproduce    string
}

func printTable(w io.Writer, rows []row, n int) {
	fmt.Fprintln(w, "| what | kasmrt | other | other's figure | ratio | reproduce |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		ratio := "—"
		switch {
		case r.ratio > 0:
			ratio = fmt.Sprintf("%.2f×", r.ratio)
		case r.kasmrt > 0 && r.them > 0:
			ratio = fmt.Sprintf("%.1f×", float64(r.them)/float64(r.kasmrt))
		}
		ours, theirs := r.ours, r.theirs
		if ours == "" {
			ours = withP95(r.kasmrt, r.p95)
		}
		if theirs == "" {
			theirs = withP95(r.them, r.themP95)
		}
		// A pipe in a cell, even in code, would end the cell.
		repro := strings.ReplaceAll(r.reproduce, "|", `\|`)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | `%s` |\n", r.what, ours, r.other, theirs, ratio, repro)
	}
}

func withP95(median, p95 time.Duration) string {
	s := ms(median)
	if p95 > 0 {
		s += ", p95 " + ms(p95)
	}
	return s
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

func median(d []time.Duration) time.Duration { return quantile(d, 0.5) }

// quantile is the q-quantile of d (the nearest rank below).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*q)]
}

// p95 is d's 95th percentile when d has enough samples to tell one (ten),
// else zero, which the table leaves out.
func p95(d []time.Duration) time.Duration {
	if len(d) < 10 {
		return 0
	}
	return quantile(d, 0.95)
}

// interleave runs a and b n times each, alternately (a, b, b, a, a, b …:
// each pair's first alternates, so neither always runs on the other's
// heels), and returns how long each run of each took.
func interleave(n int, a, b func(i int) error) (da, db []time.Duration, err error) {
	da, db = make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	timeOne := func(f func(int) error, i int, into *[]time.Duration) error {
		start := time.Now()
		if err := f(i); err != nil {
			return err
		}
		*into = append(*into, time.Since(start))
		return nil
	}
	for i := range n {
		first, second := a, b
		firstD, secondD := &da, &db
		if i%2 == 1 {
			first, second, firstD, secondD = b, a, &db, &da
		}
		if err := timeOne(first, i, firstD); err != nil {
			return nil, nil, err
		}
		if err := timeOne(second, i, secondD); err != nil {
			return nil, nil, err
		}
	}
	return da, db, nil
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
	var act, look []time.Duration
	kasmrtStep := func(int) error {
		start := time.Now()
		if _, err := k.call(ctx, "press_key", map[string]any{"key": "a"}); err != nil {
			return err
		}
		mid := time.Now()
		_, err := k.call(ctx, "observe_screen", nil)
		act, look = append(act, mid.Sub(start)), append(look, time.Since(mid))
		return err
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
	steps, procs, err := interleave(n, kasmrtStep, processStep(0))
	if err != nil {
		return nil, err
	}
	// The sleeping step's samples alternate with kasmrt's too; the row
	// compares them with every kasmrt step measured.
	more, sleeps, err := interleave(sleepN, kasmrtStep, processStep(2*time.Second))
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(steps), more...)
	cmd := "make bench-compare"
	return []row{
		{what: "agent step on xterm 1280x800: key, then the screen", other: "xdotool + scrot + convert",
			kasmrt: median(steps), p95: p95(steps), them: median(procs), themP95: p95(procs), reproduce: cmd},
		{what: fmt.Sprintf("the same step, reference loop's 2 s settle sleep (%d samples of it)", sleepN), other: "xdotool + sleep 2 + scrot + convert",
			kasmrt: median(all), p95: p95(all), them: median(sleeps), reproduce: cmd},
		{what: "of the step: press_key to settled screen", other: "—", kasmrt: median(act), p95: p95(act), reproduce: cmd},
		{what: "of the step: observe_screen", other: "—", kasmrt: median(look), p95: p95(look), reproduce: cmd},
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

// browserSamples are one tool's timings on the page, one per sample.
type browserSamples struct {
	nav, click, fill, shot []time.Duration
}

// browserTool is one tool's session on the page: each call is one sample.
type browserTool struct {
	navigate          func(i int) error
	click, fill, shot func(int) error
	// beforeClicks runs after the navigations, before the clicks
	// (Playwright reads the refs of its last snapshot there).
	beforeClicks func() error
	close        func()
}

// compareBrowser measures navigate, click, fill and screenshot through
// kasmrt's MCP tools and through Playwright MCP's, both headless, then
// navigate, click and screenshot with both browsers headful on an Xvfb,
// where kasmrt captures the window from the X screen. Both tools' sessions
// are open at once and their samples alternate.
func compareBrowser(ctx context.Context, bin, playwright, chromium string, n int) ([]row, error) {
	base, stop, err := benchPages()
	if err != nil {
		return nil, err
	}
	defer stop()
	kHeadless, pHeadless, err := browserPair(ctx, n,
		func() (*browserTool, error) { return kasmrtBrowser(ctx, bin, base, true) },
		func() (*browserTool, error) { return playwrightBrowser(ctx, playwright, chromium, base, "") })
	if err != nil {
		return nil, fmt.Errorf("headless: %w", err)
	}
	sess, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		return nil, fmt.Errorf("start Xvfb for Playwright: %w", err)
	}
	defer sess.Close()
	kHeadful, pHeadful, err := browserPair(ctx, n,
		func() (*browserTool, error) { return kasmrtBrowser(ctx, bin, base, false) },
		func() (*browserTool, error) {
			return playwrightBrowser(ctx, playwright, chromium, base, sess.Display())
		})
	if err != nil {
		return nil, fmt.Errorf("headful: %w", err)
	}
	repro := "make bench-compare"
	other := "Playwright MCP "
	worst := fmt.Sprintf(", the slowest of %d", n)
	r := func(what, them string, k, p []time.Duration) row {
		return row{what: what, other: other + them, kasmrt: median(k), p95: p95(k), them: median(p), themP95: p95(p), reproduce: repro}
	}
	slowest := func(what, them string, k, p []time.Duration) row {
		return row{what: what + worst, other: other + them + worst, kasmrt: slices.Max(k), them: slices.Max(p), reproduce: repro}
	}
	return []row{
		r("navigate (`cdp_navigate`, with its settled screen)", "`browser_navigate` (with its snapshot)", kHeadless.nav, pHeadless.nav),
		slowest("navigate", "`browser_navigate`", kHeadless.nav, pHeadless.nav),
		r("click (`cdp_click`, with its settled screen)", "`browser_click` (with its snapshot)", kHeadless.click, pHeadless.click),
		r("fill 10 characters (`cdp_fill`, key events)", "`browser_type` (fill)", kHeadless.fill, pHeadless.fill),
		r("screenshot (`observe_screen`, PNG)", "`browser_take_screenshot` (PNG)", kHeadless.shot, pHeadless.shot),
		r("headful on Xvfb: navigate (the window captured from the X screen once drawn and still)", "headful `browser_navigate`", kHeadful.nav, pHeadful.nav),
		slowest("headful on Xvfb: navigate", "headful `browser_navigate`", kHeadful.nav, pHeadful.nav),
		r("headful on Xvfb: click (`cdp_click`, with its settled screen)", "headful `browser_click`", kHeadful.click, pHeadful.click),
		r("headful on Xvfb: screenshot (`observe_screen`)", "headful `browser_take_screenshot`", kHeadful.shot, pHeadful.shot),
	}, nil
}

// browserPair opens both tools' sessions and measures them alternately,
// operation by operation.
func browserPair(ctx context.Context, n int, openK, openP func() (*browserTool, error)) (k, p browserSamples, err error) {
	kt, err := openK()
	if err != nil {
		return k, p, fmt.Errorf("kasmrt: %w", err)
	}
	defer kt.close()
	pt, err := openP()
	if err != nil {
		return k, p, fmt.Errorf("Playwright MCP: %w", err)
	}
	defer pt.close()
	if k.nav, p.nav, err = interleave(n, kt.navigate, pt.navigate); err != nil {
		return k, p, err
	}
	for _, t := range []*browserTool{kt, pt} {
		if t.beforeClicks != nil {
			if err := t.beforeClicks(); err != nil {
				return k, p, err
			}
		}
	}
	if k.click, p.click, err = interleave(n, kt.click, pt.click); err != nil {
		return k, p, err
	}
	if k.fill, p.fill, err = interleave(n, kt.fill, pt.fill); err != nil {
		return k, p, err
	}
	if k.shot, p.shot, err = interleave(n, kt.shot, pt.shot); err != nil {
		return k, p, err
	}
	return k, p, nil
}

// kasmrtBrowser opens a `kasmrt mcp` session on a browser it launches,
// headless or headful on the session's own Xvfb, for the cdp_* tools and
// observe_screen.
func kasmrtBrowser(ctx context.Context, bin, base string, headless bool) (*browserTool, error) {
	dir, err := os.MkdirTemp("", "kasmrt-bench-compare-")
	if err != nil {
		return nil, err
	}
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
		os.RemoveAll(dir)
		return nil, err
	}
	k, err := openKasmrt(ctx, bin, dir, "page.yaml", nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	callOnly := func(tool string, args map[string]any) func(int) error {
		return func(int) error {
			_, err := k.call(ctx, tool, args)
			return err
		}
	}
	return &browserTool{
		navigate: func(i int) error {
			_, err := k.call(ctx, "cdp_navigate", map[string]any{"target": []string{"b", "a"}[i%2]})
			return err
		},
		click: callOnly("cdp_click", map[string]any{"target": "add"}),
		fill:  callOnly("cdp_fill", map[string]any{"target": "name", "ref": "value"}),
		shot:  callOnly("observe_screen", nil),
		close: func() { k.close(ctx); os.RemoveAll(dir) },
	}, nil
}

// playwrightBrowser opens Playwright MCP on the same page: headless when
// display is empty, else headful on that display.
func playwrightBrowser(ctx context.Context, playwright, chromium, base, display string) (*browserTool, error) {
	dir, err := os.MkdirTemp("", "kasmrt-bench-compare-")
	if err != nil {
		return nil, err
	}
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
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start Playwright MCP: %w", err)
	}
	var snapshot, addRef, nameRef string
	refOf := func(role, name string) (string, error) {
		m := regexp.MustCompile(role + ` "` + name + `"[^\n]*\[ref=([^\]]+)\]`).FindStringSubmatch(snapshot)
		if m == nil {
			return "", fmt.Errorf("no %s %q in Playwright's snapshot:\n%s", role, name, snapshot)
		}
		return m[1], nil
	}
	return &browserTool{
		navigate: func(i int) error {
			var err error
			snapshot, err = call(ctx, pw, "browser_navigate", map[string]any{"url": base + []string{"/b", "/a"}[i%2]})
			return err
		},
		beforeClicks: func() error {
			// Playwright MCP may put the snapshot in a file and link it.
			if m := regexp.MustCompile(`\[Snapshot\]\(([^)]+)\)`).FindStringSubmatch(snapshot); m != nil {
				b, err := os.ReadFile(m[1])
				if err != nil {
					return fmt.Errorf("read Playwright's snapshot: %w", err)
				}
				snapshot = string(b)
			}
			var err error
			if addRef, err = refOf("button", "Add one"); err != nil {
				return err
			}
			nameRef, err = refOf("textbox", "Name")
			return err
		},
		click: func(int) error {
			_, err := call(ctx, pw, "browser_click", map[string]any{"element": "Add one button", "target": addRef})
			return err
		},
		fill: func(int) error {
			_, err := call(ctx, pw, "browser_type", map[string]any{"element": "Name text field", "target": nameRef, "text": fillValue})
			return err
		},
		shot: func(int) error {
			_, err := call(ctx, pw, "browser_take_screenshot", map[string]any{"type": "png", "scale": "css"})
			return err
		},
		close: func() { pw.Close(); os.RemoveAll(dir) },
	}, nil
}

// compareSixel runs the console's sixel benchmarks against img2sixel's
// from one test binary, a round of each in turn, rounds of 5 frames, and
// compares the medians of the rounds.
func compareSixel(ctx context.Context, n int) ([]row, error) {
	dir, err := os.MkdirTemp("", "kasmrt-bench-sixel-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "graphics.test")
	if out, err := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./tui/graphics").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go test -c ./tui/graphics: %w: %s", err, out)
	}
	pkg, err := filepath.Abs("tui/graphics")
	if err != nil {
		return nil, err
	}
	frames := []string{"640x400", "1280x800"}
	samples := map[string][]time.Duration{}
	round := func(bench, sub string) func(int) error {
		return func(int) error {
			cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", bench+"$/.*/"+sub+"$", "-test.benchtime", "5x", "-test.count", "1")
			cmd.Dir = pkg // the frames are in its testdata
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %w: %s", bench, err, out)
			}
			for name, m := range benchMetrics(out, bench+"/") {
				samples[name] = append(samples[name], time.Duration(m["ns/op"]))
			}
			return nil
		}
	}
	rounds := max(4, n/4)
	if _, _, err := interleave(rounds, round("BenchmarkSixel", "adaptive"), round("BenchmarkImg2Sixel", "scale")); err != nil {
		return nil, err
	}
	repro := "go test ./tui/graphics -run '^$' -bench 'Sixel$/.*/adaptive$|Img2Sixel$/.*/scale$' -benchtime 5x"
	var rows []row
	for _, frame := range frames {
		ours := samples["frame-"+frame+".png/adaptive"]
		theirs := samples["frame-"+frame+".png/scale"]
		if len(ours) == 0 || len(theirs) == 0 {
			return nil, fmt.Errorf("no sixel figures for %s", frame)
		}
		rows = append(rows, row{what: fmt.Sprintf("sixel frame for a 100x30-cell pane from a %s screen (warm encoder; median of %d rounds of 5)", frame, rounds),
			other: "`img2sixel -w W -h H` (a process)", kasmrt: median(ours), them: median(theirs), reproduce: repro})
	}
	return rows, nil
}

// compareWatched runs BenchmarkWatchedStep: the same goal run headless and
// watched in the live console, one of each in turn, and gives the turn's
// median and p95 each way and each way's peak RSS.
func compareWatched(ctx context.Context, bin string, runs int) ([]row, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	bench := fmt.Sprintf("%dx", runs)
	args := []string{"test", "./cmd/kasmrt", "-run", "^$", "-bench", "BenchmarkWatchedStep", "-benchtime", bench, "-count", "1", "-timeout", "20m"}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "KASM_BENCH_KASMRT="+abs)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, out)
	}
	m, ok := benchMetrics(out, "BenchmarkWatchedStep")[""]
	if !ok || m["ms/headless-median"] == 0 || m["ms/watched-median"] == 0 {
		return nil, fmt.Errorf("no figures in:\n%s", out)
	}
	msOf := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	repro := "go test ./cmd/kasmrt -run '^$' -bench BenchmarkWatchedStep -benchtime " + bench
	turns := runs * 24
	return []row{
		{what: fmt.Sprintf("a turn of a goal run on xterm 1280x800 (observe_screen or press_key, the model answering at once; %d turns each way): headless", turns),
			other:  "the same run watched: `kasmrt run --tui`, block graphics in a 160x50 tmux (ratio: watched over headless)",
			kasmrt: msOf(m["ms/headless-median"]), p95: msOf(m["ms/headless-p95"]),
			them: msOf(m["ms/watched-median"]), themP95: msOf(m["ms/watched-p95"]), ratio: m["watched/headless"], reproduce: repro},
		{what: "CPU time of the `kasmrt run` process itself per run (median), headless",
			other: "the same, watched", ours: fmt.Sprintf("%.0f ms", m["cpu-ms/headless-run"]), theirs: fmt.Sprintf("%.0f ms", m["cpu-ms/watched-run"]),
			ratio: m["cpu-ms/watched-run"] / m["cpu-ms/headless-run"], reproduce: repro},
		{what: "peak RSS of the `kasmrt run` process itself (VmHWM), headless",
			other: "the same, watched", ours: fmt.Sprintf("%.1f MB", m["MB/headless-rss"]), theirs: fmt.Sprintf("%.1f MB", m["MB/watched-rss"]),
			ratio: m["MB/watched-rss"] / m["MB/headless-rss"], reproduce: repro},
	}, nil
}

func writeFiles(dir string, files map[string]string) error {
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	return nil
}
