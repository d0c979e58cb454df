package cdp

import (
	"context"
	"testing"
)

// BenchmarkLaunch measures a headless launch to an attached, usable tab,
// and the Close that kills the group.
func BenchmarkLaunch(b *testing.B) {
	if testing.Short() {
		b.Skip("launches Chromium")
	}
	ctx := context.Background()
	for b.Loop() {
		br, err := Launch(ctx, LaunchOptions{Headless: true})
		if err != nil {
			b.Fatalf("Launch: %v", err)
		}
		if err := br.Close(); err != nil {
			b.Fatalf("Close: %v", err)
		}
	}
}

// BenchmarkActions measures each tab operation on the login page in one
// warm headless browser.
func BenchmarkActions(b *testing.B) {
	srv := loginServer(b).URL + "/"
	ctx := context.Background()
	br, err := Launch(ctx, LaunchOptions{Headless: true, StartURL: srv})
	if err != nil {
		b.Fatalf("Launch: %v", err)
	}
	defer br.Close()
	tab := br.Tab()
	if err := tab.Wait(ctx, WaitSpec{Selector: "#go"}); err != nil {
		b.Fatal(err)
	}
	els, err := tab.ListInteractive(ctx, "textbox")
	if err != nil {
		b.Fatalf("ListInteractive: %v", err)
	}
	handle := handleOf(b, els, "textbox", "Username").Handle
	cases := []struct {
		name string
		run  func() error
	}{
		{"URL", func() error { _, err := tab.URL(ctx); return err }},
		{"ListInteractive", func() error { _, err := tab.ListInteractive(ctx, ""); return err }},
		{"Query", func() error { _, err := tab.Query(ctx, "#go"); return err }},
		{"Click", func() error { return tab.Click(ctx, "#user") }},
		{"ClickDescribedHandle", func() error { _, err := tab.ClickDescribed(ctx, handle, ""); return err }},
		{"ClickDescribedText", func() error { _, err := tab.ClickDescribed(ctx, "", "Username"); return err }},
		{"Fill10Chars", func() error { return tab.Fill(ctx, "#user", "0123456789") }},
		{"WaitVisibleNow", func() error { return tab.Wait(ctx, WaitSpec{Selector: "#go"}) }},
		{"Screenshot", func() error { _, err := tab.Screenshot(ctx); return err }},
		// Last: a new document retires the handles used above.
		{"Navigate", func() error { return tab.Navigate(ctx, srv) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
