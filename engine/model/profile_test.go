package model_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

func TestProfiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		protocol model.Protocol
		coords   model.Coordinates
		multiple int
		accepts  []string
		rejects  []string
	}{
		{"qwen3-vl-8b-instruct", model.ChatCompletions, model.Relative1000, 32,
			[]string{"temperature", "top_p", "top_k", "repetition_penalty", "presence_penalty", "max_tokens"}, []string{"reasoning_effort"}},
		{"qwen3-vl-32b-instruct", model.ChatCompletions, model.Relative1000, 32,
			[]string{"temperature", "top_p", "top_k", "repetition_penalty", "presence_penalty", "max_tokens"}, []string{"reasoning_effort"}},
		{"qwen2.5-vl-7b-instruct", model.ChatCompletions, model.Absolute, 28, []string{"max_tokens", "top_k"}, []string{"reasoning_effort"}},
		{"gpt", model.Responses, model.Absolute, 0, []string{"max_tokens", "reasoning_effort"}, []string{"temperature", "top_k"}},
		{"openai-compatible", model.ChatCompletions, model.Absolute, 0, []string{"max_tokens", "temperature", "top_p"}, []string{"top_k", "reasoning_effort"}},
		{"kimi-k3", model.ChatCompletions, model.Absolute, 0, []string{"max_tokens", "temperature", "top_p", "reasoning_effort"}, []string{"top_k", "repetition_penalty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := model.LookupProfile(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != tt.name || (p.ServedModel == "") != (tt.name == model.DefaultProfile) || p.Protocol != tt.protocol || p.Coordinates != tt.coords || p.Image.Multiple != tt.multiple {
				t.Errorf("profile = %+v", p)
			}
			sum := sha256.Sum256([]byte(p.Prompt.Text))
			if p.Prompt.Text == "" || p.Prompt.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("prompt %s: hash %s does not match its text", p.Prompt.Name, p.Prompt.SHA256)
			}
			for _, o := range tt.accepts {
				if !p.Accepts(o) {
					t.Errorf("does not accept %s", o)
				}
			}
			for _, o := range tt.rejects {
				if p.Accepts(o) {
					t.Errorf("accepts %s", o)
				}
			}
		})
	}
}

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	p, err := model.LookupProfile("")
	if err != nil || p.Name != model.DefaultProfile {
		t.Errorf("default profile = %q, %v", p.Name, err)
	}
	if _, err := model.LookupProfile("nope"); err == nil || !strings.Contains(err.Error(), "qwen3-vl-8b-instruct") {
		t.Errorf("unknown profile error = %v, want it to list the known ones", err)
	}
	// Each call builds fresh profiles, so a caller's change stays its own.
	a := model.Profiles()["gpt"]
	a.Options[0] = "changed"
	if model.Profiles()["gpt"].Options[0] == "changed" {
		t.Error("Profiles shares state between callers")
	}
}

func TestValidateOptions(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	tests := []struct {
		profile     string
		opts        model.GenerationOptions
		unsupported []string
		wantErr     string
	}{
		{profile: "qwen3-vl-8b-instruct", opts: model.GenerationOptions{MaxTokens: i(12800), Temperature: f(0.7), TopP: f(0.8), TopK: i(20), RepetitionPenalty: f(1), PresencePenalty: f(1.5)}},
		{profile: "qwen3-vl-8b-instruct", opts: model.GenerationOptions{ReasoningEffort: "medium"}, unsupported: []string{"reasoning_effort"}},
		{profile: "gpt", opts: model.GenerationOptions{MaxTokens: i(16000), ReasoningEffort: "medium"}},
		{profile: "gpt", opts: model.GenerationOptions{Temperature: f(0.7), TopK: i(3), MaxTokens: i(1)}, unsupported: []string{"temperature", "top_k"}},
		{profile: "openai-compatible", opts: model.GenerationOptions{TopK: i(3)}, unsupported: []string{"top_k"}},
		{profile: "openai-compatible", opts: model.GenerationOptions{Temperature: f(2.5)}, wantErr: "temperature must be in 0–2"},
		{profile: "qwen3-vl-8b-instruct", opts: model.GenerationOptions{TopP: f(0)}, wantErr: "top_p"},
		{profile: "qwen3-vl-8b-instruct", opts: model.GenerationOptions{MaxTokens: i(0)}, wantErr: "max_tokens"},
		{profile: "gpt", opts: model.GenerationOptions{ReasoningEffort: "extreme"}, wantErr: "reasoning_effort"},
	}
	for _, tt := range tests {
		p, _ := model.LookupProfile(tt.profile)
		err := model.ValidateOptions(p, tt.opts)
		var unsup *model.UnsupportedOptionsError
		switch {
		case tt.unsupported != nil:
			if !errors.As(err, &unsup) || !slices.Equal(unsup.Names, tt.unsupported) {
				t.Errorf("%s %v: err = %v, want unsupported %v", tt.profile, tt.opts.Set(), err, tt.unsupported)
			}
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.profile, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s %v: %v", tt.profile, tt.opts.Set(), err)
		}
	}
}

func TestParseFinalAnswer(t *testing.T) {
	t.Parallel()
	qwen, _ := model.LookupProfile("qwen3-vl-8b-instruct")
	gpt, _ := model.LookupProfile("gpt")
	tests := []struct {
		p      model.Profile
		text   string
		want   string
		wantOK bool
	}{
		{qwen, "thinking… <answer> goal-met </answer>", "goal-met", true},
		{qwen, "<answer>a</answer> then <answer>b</answer>", "b", true},
		{qwen, "no tag here", "", false},
		{qwen, "", "", false},
		{gpt, "plain final text", "plain final text", true},
		{gpt, "x <answer>tagged</answer>", "tagged", true},
		{gpt, "  ", "", false},
	}
	for _, tt := range tests {
		got, ok := tt.p.ParseFinalAnswer(tt.text)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s ParseFinalAnswer(%q) = %q, %v; want %q, %v", tt.p.Name, tt.text, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestImageSizeFit(t *testing.T) {
	t.Parallel()
	qwen3, _ := model.LookupProfile("qwen3-vl-8b-instruct")
	qwen25, _ := model.LookupProfile("qwen2.5-vl-7b-instruct")
	gpt, _ := model.LookupProfile("gpt")
	compat, _ := model.LookupProfile("openai-compatible")
	tests := []struct {
		p            model.Profile
		w, h         int
		wantW, wantH int
	}{
		{qwen3, 1280, 800, 1280, 800},
		{qwen3, 1920, 1080, 1344, 736},
		{qwen3, 800, 600, 800, 608},
		{qwen3, 1023, 767, 1024, 768},
		{qwen25, 1280, 800, 1260, 784},
		{qwen25, 1920, 1080, 1316, 728},
		{qwen25, 800, 600, 812, 588},
		{gpt, 1280, 800, 1229, 768},
		{gpt, 1920, 1080, 1365, 768},
		{gpt, 800, 600, 800, 600},
		{compat, 1920, 1080, 1280, 720},
		{compat, 1280, 800, 1280, 800},
		{compat, 1001, 3001, 427, 1280},
	}
	for _, tt := range tests {
		w, h := tt.p.Image.Fit(tt.w, tt.h)
		if w != tt.wantW || h != tt.wantH {
			t.Errorf("%s Fit(%d, %d) = %d×%d, want %d×%d", tt.p.Name, tt.w, tt.h, w, h, tt.wantW, tt.wantH)
		}
		if m := tt.p.Image.Multiple; m > 0 && (w%m != 0 || h%m != 0) {
			t.Errorf("%s Fit(%d, %d) = %d×%d, not multiples of %d", tt.p.Name, tt.w, tt.h, w, h, m)
		}
		if max := tt.p.Image.MaxPixels; max > 0 && w*h > max {
			t.Errorf("%s Fit(%d, %d) = %d×%d, over %d pixels", tt.p.Name, tt.w, tt.h, w, h, max)
		}
	}
}

// TestImageSizeFitBounds: each bound on its own and after another: the
// short edge and the pixel count are checked at the size the long edge
// left, a side rounded to the patch multiple starts from that size too,
// and a side of no pixels is given back as it is.
func TestImageSizeFitBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		s            model.ImageSize
		w, h         int
		wantW, wantH int
	}{
		{"long edge, short edge fine after", model.ImageSize{MaxLongEdge: 1000, MaxShortEdge: 700, MaxPixels: 1_000_000}, 2000, 1000, 1000, 500},
		{"long edge, then pixels", model.ImageSize{MaxLongEdge: 1000, MaxPixels: 200_000}, 2000, 1000, 632, 316},
		{"pixels alone", model.ImageSize{MaxPixels: 1_000_000}, 2000, 2000, 1000, 1000},
		{"short edge", model.ImageSize{MaxShortEdge: 500}, 1000, 2000, 500, 1000},
		{"long edge, then the multiple", model.ImageSize{MaxLongEdge: 1000, Multiple: 28}, 2000, 1000, 1008, 504},
		{"no width", model.ImageSize{Multiple: 28}, 0, 100, 0, 100},
		{"no height", model.ImageSize{Multiple: 28}, 100, 0, 100, 0},
		// As in Qwen's smart_resize, only a rounded size past a bound is
		// scaled again; one exactly at it is sent as rounded.
		{"rounded to exactly the budget", model.ImageSize{MaxPixels: 1280 * 800, Multiple: 32}, 1270, 800, 1280, 800},
		{"rounded to exactly the minimum", model.ImageSize{MinPixels: 256 * 256, Multiple: 32}, 250, 256, 256, 256},
	}
	for _, tt := range tests {
		if w, h := tt.s.Fit(tt.w, tt.h); w != tt.wantW || h != tt.wantH {
			t.Errorf("%s: Fit(%d, %d) = %d×%d, want %d×%d", tt.name, tt.w, tt.h, w, h, tt.wantW, tt.wantH)
		}
	}
}

func TestResolveEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		proto   model.Protocol
		want    string
		wantErr string
	}{
		{"http://host:8000", model.ChatCompletions, "http://host:8000/v1/chat/completions", ""},
		{"http://host:8000/", model.Responses, "http://host:8000/v1/responses", ""},
		{"https://api.example.com/v1", model.ChatCompletions, "https://api.example.com/v1/chat/completions", ""},
		{"https://api.example.com/v1/", model.Responses, "https://api.example.com/v1/responses", ""},
		{"https://gw.example.com/openai/v1/chat/completions", model.ChatCompletions, "https://gw.example.com/openai/v1/chat/completions", ""},
		{"https://api.example.com/v1/responses", model.Responses, "https://api.example.com/v1/responses", ""},
		{"http://host:8000/prefix", model.ChatCompletions, "http://host:8000/prefix/v1/chat/completions", ""},
		{"https://api.example.com/v1/responses", model.ChatCompletions, "", "responses URL but the profile speaks chat_completions"},
		{"https://api.example.com/v1/chat/completions", model.Responses, "", "chat_completions URL"},
		{"https://user:hunter2@api.example.com/v1", model.ChatCompletions, "", "credentials"},
		{"https://token@api.example.com", model.ChatCompletions, "", "credentials"},
		{"ftp://host/v1", model.ChatCompletions, "", "http or https"},
		{"host:8000", model.ChatCompletions, "", ""},
		{"", model.ChatCompletions, "", "http or https"},
	}
	for _, tt := range tests {
		got, err := model.ResolveEndpoint(tt.raw, tt.proto)
		if tt.raw == "host:8000" {
			if err == nil {
				t.Errorf("ResolveEndpoint(%q) = %q, want an error", tt.raw, got)
			}
			continue
		}
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ResolveEndpoint(%q, %s) err = %v, want %q", tt.raw, tt.proto, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error repeats the password: %v", err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveEndpoint(%q, %s) = %q, %v; want %q", tt.raw, tt.proto, got, err, tt.want)
		}
	}
}

func TestNewRejectsCredentialURL(t *testing.T) {
	t.Parallel()
	p, _ := model.LookupProfile("")
	_, err := model.New(model.Config{Endpoint: "http://u:secretpw@127.0.0.1:1/v1", Profile: p})
	if err == nil || strings.Contains(err.Error(), "secretpw") {
		t.Errorf("New err = %v, want a rejection that does not repeat the password", err)
	}
}

// TestValidateOptionsEdges: each option's range includes its edges and
// refuses just past them.
func TestValidateOptionsEdges(t *testing.T) {
	t.Parallel()
	p := model.Profile{Name: "every option", Options: []string{model.OptMaxTokens, model.OptTemperature, model.OptTopP, model.OptTopK,
		model.OptRepetitionPenalty, model.OptPresencePenalty, model.OptReasoningEffort}}
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		opts model.GenerationOptions
		ok   bool
	}{
		{"max_tokens 1", model.GenerationOptions{MaxTokens: i(1)}, true},
		{"max_tokens 0", model.GenerationOptions{MaxTokens: i(0)}, false},
		{"temperature 0", model.GenerationOptions{Temperature: f(0)}, true},
		{"temperature 2", model.GenerationOptions{Temperature: f(2)}, true},
		{"temperature below 0", model.GenerationOptions{Temperature: f(-0.01)}, false},
		{"temperature above 2", model.GenerationOptions{Temperature: f(2.01)}, false},
		{"top_p 1", model.GenerationOptions{TopP: f(1)}, true},
		{"top_p 0", model.GenerationOptions{TopP: f(0)}, false},
		{"top_p above 1", model.GenerationOptions{TopP: f(1.01)}, false},
		{"top_k 1", model.GenerationOptions{TopK: i(1)}, true},
		{"top_k 0", model.GenerationOptions{TopK: i(0)}, false},
		{"repetition_penalty 0", model.GenerationOptions{RepetitionPenalty: f(0)}, false},
		{"repetition_penalty 0.01", model.GenerationOptions{RepetitionPenalty: f(0.01)}, true},
		{"presence_penalty -2", model.GenerationOptions{PresencePenalty: f(-2)}, true},
		{"presence_penalty 2", model.GenerationOptions{PresencePenalty: f(2)}, true},
		{"presence_penalty below -2", model.GenerationOptions{PresencePenalty: f(-2.01)}, false},
		{"presence_penalty above 2", model.GenerationOptions{PresencePenalty: f(2.01)}, false},
	} {
		if err := model.ValidateOptions(p, c.opts); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
	}
}

// TestQwenSmallestImage: a tiny screen is enlarged to the profile's
// smallest image, its patch multiple kept.
func TestQwenSmallestImage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		profile      string
		wantW, wantH int
	}{{"qwen2.5-vl-7b-instruct", 56, 56}, {"qwen3-vl-8b-instruct", 256, 256}, {"qwen3-vl-32b-instruct", 256, 256}} {
		p, err := model.LookupProfile(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		if w, h := p.Image.Fit(20, 20); w != c.wantW || h != c.wantH {
			t.Errorf("%s: Fit(20, 20) = %d×%d, want %d×%d", c.profile, w, h, c.wantW, c.wantH)
		}
	}
}

// TestPromptsClaimOnlyWhatToolsDo checks the system prompts do not
// promise what no tool does: images are named by handle, but no tool takes
// one, so the model cannot "refer to" them.
func TestPromptsClaimOnlyWhatToolsDo(t *testing.T) {
	t.Parallel()
	for name, p := range model.Profiles() {
		if strings.Contains(p.Prompt.Text, "refer to") {
			t.Errorf("%s's prompt %s says the model can refer to images", name, p.Prompt.Name)
		}
		if !strings.Contains(p.Prompt.Text, "no tool takes a handle") {
			t.Errorf("%s's prompt %s does not say no tool takes a handle", name, p.Prompt.Name)
		}
	}
}

// A prompt without a tool's rules keeps every other rule whole, and a tool
// left out of every prompt's rules leaves it as shipped.
func TestPromptWithout(t *testing.T) {
	t.Parallel()
	word := func(w string) *regexp.Regexp { return regexp.MustCompile(`\b` + w + `\b`) }
	for _, name := range model.ProfileNames() {
		p, _ := model.LookupProfile(name)
		for _, tc := range []struct {
			without    []string
			gone, kept []string
		}{
			{nil, nil, []string{"escalate", "record_verdict", "type_text", "observe_screen"}},
			{[]string{"escalate"}, []string{"escalate"}, []string{"record_verdict", "type_text", "observe_screen"}},
			{[]string{"ask_human", "escalate"}, []string{"ask_human", "escalate"}, []string{"record_verdict", "type_text"}},
			// The closing words still say what an update lists "when the
			// run has them"; the rules no longer name it.
			{[]string{"type_text"}, []string{"ask_human"}, []string{"escalate", "record_verdict"}},
			{[]string{"cdp_fill"}, nil, []string{"escalate", "record_verdict", "type_text"}},
		} {
			got := p.Prompt.Without(tc.without)
			sum := sha256.Sum256([]byte(got.Text))
			if got.SHA256 != hex.EncodeToString(sum[:]) || got.Name != p.Prompt.Name {
				t.Errorf("%s without %v: name %s, hash %s does not match its text", name, tc.without, got.Name, got.SHA256)
			}
			if len(tc.gone) == 0 && got.Text != p.Prompt.Text {
				t.Errorf("%s without %v changed:\n%s", name, tc.without, got.Text)
			}
			for _, w := range tc.gone {
				if word(w).MatchString(got.Text) {
					t.Errorf("%s without %v still names %s:\n%s", name, tc.without, w, got.Text)
				}
			}
			for _, w := range tc.kept {
				if word(w).MatchString(p.Prompt.Text) && !word(w).MatchString(got.Text) {
					t.Errorf("%s without %v lost %s:\n%s", name, tc.without, w, got.Text)
				}
			}
		}
	}
}
