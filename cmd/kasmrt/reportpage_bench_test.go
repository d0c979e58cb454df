package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// BenchmarkReportPage measures report.html for a 40-step scripted run and
// a 25-turn goal run, both against a real xterm: the page's size and how
// long real headless Chromium takes to load it from the file system (the
// navigation's loadEventEnd). The runs are made once; each iteration
// loads the page again.
func BenchmarkReportPage(b *testing.B) {
	b.Setenv("KASM_RUNTIME_DEADLINE_S", "300")
	var steps strings.Builder
	for range 20 {
		steps.WriteString("  - click: center\n  - observe_screen: {}\n")
	}
	script := []modeltest.Exchange{}
	for range 12 {
		script = append(script, modeltest.Call("observe_screen", `{}`).WithText("I look at the terminal before I click it again."),
			modeltest.Call("click", `{"target": "center"}`))
	}
	script = append(script, modeltest.Call("record_verdict", `{"verdict": "goal-met", "reason": "clicked enough"}`))
	runs := []struct {
		name, scenario string
		script         []modeltest.Exchange
	}{
		{"scripted-40-steps", "name: bench scripted" + runTestXterm + "steps:\n" + steps.String(), nil},
		{"goal-25-turns", "name: bench goal" + runTestXterm + "goal: Click the terminal a dozen times.\nagentic_max_iterations: 30\n", script},
	}
	// A page with nothing in it, for what Chromium itself takes here.
	b.Run("empty-page", func(b *testing.B) {
		html := testkit.WriteFile(b, b.TempDir(), "empty.html", "<!DOCTYPE html><title>empty</title><p>empty")
		benchReloads(b, html)
	})
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			dir := benchRun(b, r.scenario, r.script)
			html := filepath.Join(dir, "report.html")
			st, err := os.Stat(html)
			if err != nil {
				b.Fatal(err)
			}
			p := benchReloads(b, html)
			b.ReportMetric(float64(p.int(b, `document.querySelectorAll("img").length`)), "img-elements")
			b.ReportMetric(float64(p.int(b, `Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length`)), "images-loaded")
			b.ReportMetric(float64(st.Size()), "page-bytes")
			screens, _ := os.ReadDir(filepath.Join(dir, "screens"))
			b.ReportMetric(float64(len(screens)), "screens")
		})
	}
}

// benchReloads opens html in Chromium, reloads it once per iteration and
// reports the mean milliseconds until it was ready and until it loaded.
func benchReloads(b *testing.B, html string) *loadedPage {
	b.Helper()
	p := openPage(b, html)
	var readyMS, loadMS float64
	for b.Loop() {
		ready, load := p.reload(b)
		readyMS, loadMS = readyMS+ready, loadMS+load
	}
	b.ReportMetric(readyMS/float64(b.N), "ready-ms")
	b.ReportMetric(loadMS/float64(b.N), "load-ms")
	return p
}

// benchRun runs scenario headless, against a model test server playing
// script when there is one, and returns the report directory.
func benchRun(b *testing.B, scenario string, script []modeltest.Exchange) string {
	b.Helper()
	dir := b.TempDir()
	path := testkit.WriteFile(b, dir, "scenario.yaml", scenario)
	args := []string{"run", path, "--headless", "--display", "-", "--report", filepath.Join(dir, "report")}
	if script != nil {
		srv := modeltest.New(b, script...)
		args = append(args, "-o", testkit.WriteFile(b, dir, "operator.yaml", strings.ReplaceAll(pageOperator, "ENDPOINT", srv.URL())))
	}
	var out, errs strings.Builder
	if code := run(context.Background(), args, strings.NewReader(""), &out, &errs); code != 0 {
		b.Fatalf("exit %d\n%s\n%s", code, out.String(), errs.String())
	}
	return filepath.Join(dir, "report")
}
