package model

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

//go:embed prompts/*.md
var promptFiles embed.FS

// Protocol is the wire protocol a profile speaks.
type Protocol string

// The protocols kasmrt speaks.
const (
	ChatCompletions Protocol = "chat_completions"
	Responses       Protocol = "responses"
)

// Coordinates is how a model family writes points on an image.
type Coordinates string

// The coordinate conventions.
const (
	// Absolute points are pixels of the (resized) image the model was sent.
	Absolute Coordinates = "absolute"
	// Relative1000 points are scaled to 0–1000 on both axes, independent
	// of the image size.
	Relative1000 Coordinates = "relative_1000"
)

// Generation option names, as written in the operator file.
const (
	OptMaxTokens         = "max_tokens"
	OptTemperature       = "temperature"
	OptTopP              = "top_p"
	OptTopK              = "top_k"
	OptRepetitionPenalty = "repetition_penalty"
	OptPresencePenalty   = "presence_penalty"
	OptReasoningEffort   = "reasoning_effort"
)

// ImageSize is the size a profile prefers its images at. Zero fields do not
// constrain.
type ImageSize struct {
	// MaxLongEdge bounds the longer side in pixels.
	MaxLongEdge int
	// MaxShortEdge bounds the shorter side in pixels.
	MaxShortEdge int
	// MaxPixels bounds width×height.
	MaxPixels int
	// MinPixels is the smallest width×height the model accepts.
	MinPixels int
	// Multiple rounds both sides to a multiple of this (Qwen's patch
	// grid: 28 for Qwen2.5-VL, 32 for Qwen3-VL).
	Multiple int
}

// Prompt is a system prompt shipped in the binary with its content hash, so
// run manifests can record exactly which prompt a run used.
type Prompt struct {
	Name   string
	Text   string
	SHA256 string
}

// Without returns the prompt with the rules that name any of tools left
// out, and its hash taken anew: a model is never told to call a tool the
// operator removed (tools.disabled). A rule is a line starting "- " with
// the indented lines that continue it; each names one tool's use, so
// dropping it leaves the others whole.
func (p Prompt) Without(tools []string) Prompt {
	if len(tools) == 0 {
		return p
	}
	quoted := make([]string, len(tools))
	for i, t := range tools {
		quoted[i] = regexp.QuoteMeta(t)
	}
	names := regexp.MustCompile(`\b(?:` + strings.Join(quoted, "|") + `)\b`)
	// The text in blocks: a rule with its continuation lines, or a line
	// of anything else.
	var blocks []string
	for line := range strings.Lines(p.Text) {
		if n := len(blocks); n > 0 && strings.HasPrefix(line, "  ") && strings.HasPrefix(blocks[n-1], "- ") {
			blocks[n-1] += line
			continue
		}
		blocks = append(blocks, line)
	}
	var kept []string
	for _, b := range blocks {
		if !strings.HasPrefix(b, "- ") || !names.MatchString(b) {
			kept = append(kept, b)
		}
	}
	text := strings.Join(kept, "")
	if text == p.Text {
		return p
	}
	sum := sha256.Sum256([]byte(text))
	return Prompt{Name: p.Name, Text: text, SHA256: hex.EncodeToString(sum[:])}
}

// FinalAnswer says how a final answer is taken from assistant text.
type FinalAnswer struct {
	// Tag is the element name the answer is wrapped in, such as "answer".
	Tag string
	// FallbackToText uses the whole assistant text when no tag is present.
	FallbackToText bool
}

// Profile is everything kasmrt knows about one model family: what to send,
// how to send it and how to read what comes back.
type Profile struct {
	Name        string
	ServedModel string
	Protocol    Protocol
	Prompt      Prompt
	// Options lists the generation option names the profile accepts.
	Options     []string
	Coordinates Coordinates
	Image       ImageSize
	Answer      FinalAnswer
	// ToolChoices are the tool_choice values the profile's servers take;
	// the first is the default.
	ToolChoices []string
}

// The tool_choice values: the model decides, must call a tool, or must
// not.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// allToolChoices is what OpenAI's APIs and vLLM's take.
var allToolChoices = []string{ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone}

// DefaultProfile is the profile used when the operator names none.
const DefaultProfile = "openai-compatible"

// Profiles returns the built-in profiles, keyed by name. Each call builds a
// fresh map, so callers may not change what other callers see.
func Profiles() map[string]Profile {
	qwen := loadPrompt("v8_instruct")
	openai := loadPrompt("openai_v1")
	qwenOptions := []string{OptMaxTokens, OptTemperature, OptTopP, OptTopK, OptRepetitionPenalty, OptPresencePenalty}
	answerTag := FinalAnswer{Tag: "answer"}
	return map[string]Profile{
		"qwen3-vl-8b-instruct": {
			Name:        "qwen3-vl-8b-instruct",
			ServedModel: "Qwen/Qwen3-VL-8B-Instruct",
			Protocol:    ChatCompletions,
			Prompt:      qwen,
			Options:     slices.Clone(qwenOptions),
			Coordinates: Relative1000,
			Image:       ImageSize{MaxPixels: 1280 * 800, MinPixels: 64 * 32 * 32, Multiple: 32},
			Answer:      answerTag,
			ToolChoices: slices.Clone(allToolChoices),
		},
		"qwen3-vl-32b-instruct": {
			Name:        "qwen3-vl-32b-instruct",
			ServedModel: "Qwen/Qwen3-VL-32B-Instruct",
			Protocol:    ChatCompletions,
			Prompt:      qwen,
			Options:     slices.Clone(qwenOptions),
			Coordinates: Relative1000,
			Image:       ImageSize{MaxPixels: 1280 * 800, MinPixels: 64 * 32 * 32, Multiple: 32},
			Answer:      answerTag,
			ToolChoices: slices.Clone(allToolChoices),
		},
		"qwen2.5-vl-7b-instruct": {
			Name:        "qwen2.5-vl-7b-instruct",
			ServedModel: "Qwen/Qwen2.5-VL-7B-Instruct",
			Protocol:    ChatCompletions,
			Prompt:      qwen,
			Options:     slices.Clone(qwenOptions),
			Coordinates: Absolute,
			// 1280 patches of 28×28 is the budget Qwen2.5-VL is usually
			// served with.
			Image:       ImageSize{MaxPixels: 1280 * 28 * 28, MinPixels: 4 * 28 * 28, Multiple: 28},
			Answer:      answerTag,
			ToolChoices: slices.Clone(allToolChoices),
		},
		"gpt": {
			Name:        "gpt",
			ServedModel: "gpt-5-2025-08-07",
			Protocol:    Responses,
			Prompt:      openai,
			Options:     []string{OptMaxTokens, OptReasoningEffort},
			Coordinates: Absolute,
			// OpenAI fits images into 2048² and then a 768-pixel short
			// side; sending that size means the model sees our pixels.
			Image:       ImageSize{MaxLongEdge: 2048, MaxShortEdge: 768},
			Answer:      FinalAnswer{Tag: "answer", FallbackToText: true},
			ToolChoices: slices.Clone(allToolChoices),
		},
		// Kimi K3 gets a profile of its own rather than openai-compatible:
		// it speaks Chat Completions with the openai_v1 prompt, but takes
		// reasoning_effort, answers in <answer> tags with no fallback to
		// the text, and its API takes no tool_choice "required".
		"kimi-k3": {
			Name:        "kimi-k3",
			ServedModel: "kimi-k3",
			Protocol:    ChatCompletions,
			Prompt:      openai,
			Options:     []string{OptMaxTokens, OptTemperature, OptTopP, OptReasoningEffort},
			Coordinates: Absolute,
			Image:       ImageSize{MaxLongEdge: 1280},
			Answer:      answerTag,
			ToolChoices: []string{ToolChoiceAuto, ToolChoiceNone},
		},
		DefaultProfile: {
			Name: DefaultProfile,
			// No name: model.name, or the server's only model (ResolveName).
			ServedModel: "",
			Protocol:    ChatCompletions,
			Prompt:      openai,
			Options:     []string{OptMaxTokens, OptTemperature, OptTopP},
			Coordinates: Absolute,
			Image:       ImageSize{MaxLongEdge: 1280},
			Answer:      FinalAnswer{Tag: "answer", FallbackToText: true},
			ToolChoices: slices.Clone(allToolChoices),
		},
	}
}

// ProfileNames returns the built-in profile names, sorted.
func ProfileNames() []string {
	names := make([]string, 0, 8)
	for name := range Profiles() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns the named built-in profile; an empty name gives the
// default profile.
func LookupProfile(name string) (Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	p, ok := Profiles()[name]
	if !ok {
		return Profile{}, fmt.Errorf("unknown model profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	return p, nil
}

func loadPrompt(name string) Prompt {
	text, err := promptFiles.ReadFile("prompts/" + name + ".md")
	if err != nil {
		// The prompts are embedded at build time; a missing one is a
		// programming error caught by the tests.
		panic(fmt.Sprintf("embedded prompt %s: %v", name, err))
	}
	sum := sha256.Sum256(text)
	return Prompt{Name: name, Text: string(text), SHA256: hex.EncodeToString(sum[:])}
}

// Accepts reports whether the profile accepts the named generation option.
func (p Profile) Accepts(option string) bool {
	return slices.Contains(p.Options, option)
}

// ParseFinalAnswer takes the final answer from assistant text: the content
// of the last answer tag, or, for profiles that allow it, the whole text.
// ok is false when there is no answer.
func (p Profile) ParseFinalAnswer(text string) (answer string, ok bool) {
	if p.Answer.Tag != "" {
		re := regexp.MustCompile(`(?s)<` + regexp.QuoteMeta(p.Answer.Tag) + `>(.*?)</` + regexp.QuoteMeta(p.Answer.Tag) + `>`)
		if m := re.FindAllStringSubmatch(text, -1); len(m) > 0 {
			return strings.TrimSpace(m[len(m)-1][1]), true
		}
	}
	if p.Answer.FallbackToText {
		text = strings.TrimSpace(text)
		return text, text != ""
	}
	return "", false
}

// GenerationOptions are the sampling and budget options sent with each
// request. Nil or empty fields are not sent.
type GenerationOptions struct {
	MaxTokens         *int
	Temperature       *float64
	TopP              *float64
	TopK              *int
	RepetitionPenalty *float64
	PresencePenalty   *float64
	ReasoningEffort   string
	// ToolChoice is sent as tool_choice with every request that offers
	// tools; empty sends the profile's default.
	ToolChoice string
}

// Set returns the names of the options that have a value, in a fixed order.
func (o GenerationOptions) Set() []string {
	var names []string
	add := func(set bool, name string) {
		if set {
			names = append(names, name)
		}
	}
	add(o.MaxTokens != nil, OptMaxTokens)
	add(o.Temperature != nil, OptTemperature)
	add(o.TopP != nil, OptTopP)
	add(o.TopK != nil, OptTopK)
	add(o.RepetitionPenalty != nil, OptRepetitionPenalty)
	add(o.PresencePenalty != nil, OptPresencePenalty)
	add(o.ReasoningEffort != "", OptReasoningEffort)
	return names
}

// UnsupportedOptionsError names the options a profile does not accept.
type UnsupportedOptionsError struct {
	Profile string
	Names   []string
}

func (e *UnsupportedOptionsError) Error() string {
	return fmt.Sprintf("model profile %s does not accept %s", e.Profile, strings.Join(e.Names, ", "))
}

// UnsupportedToolChoiceError says the profile's servers do not take the
// tool_choice value.
type UnsupportedToolChoiceError struct {
	Profile  string
	Value    string
	Accepted []string
}

func (e *UnsupportedToolChoiceError) Error() string {
	return fmt.Sprintf("model profile %s does not accept tool_choice %q (it takes %s)", e.Profile, e.Value, strings.Join(e.Accepted, ", "))
}

// ToolChoice is the tool_choice a request sends: the operator's, else the
// profile's default.
func (p Profile) ToolChoice(opts GenerationOptions) string {
	switch {
	case opts.ToolChoice != "":
		return opts.ToolChoice
	case len(p.ToolChoices) > 0:
		return p.ToolChoices[0]
	}
	return ToolChoiceAuto
}

// ValidateOptions rejects options the profile does not accept (as an
// *UnsupportedOptionsError listing every such name) and values out of range.
func ValidateOptions(p Profile, opts GenerationOptions) error {
	var unsupported []string
	for _, name := range opts.Set() {
		if !p.Accepts(name) {
			unsupported = append(unsupported, name)
		}
	}
	if len(unsupported) > 0 {
		return &UnsupportedOptionsError{Profile: p.Name, Names: unsupported}
	}
	if opts.ToolChoice != "" && !slices.Contains(p.ToolChoices, opts.ToolChoice) {
		return &UnsupportedToolChoiceError{Profile: p.Name, Value: opts.ToolChoice, Accepted: p.ToolChoices}
	}
	reasoningEfforts := []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
	var problems []string
	bad := func(cond bool, format string, args ...any) {
		if cond {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if v := opts.MaxTokens; v != nil {
		bad(*v <= 0, "max_tokens must be positive, got %d", *v)
	}
	if v := opts.Temperature; v != nil {
		bad(!finite(*v) || *v < 0 || *v > 2, "temperature must be in 0–2, got %v", *v)
	}
	if v := opts.TopP; v != nil {
		bad(!finite(*v) || *v <= 0 || *v > 1, "top_p must be in (0, 1], got %v", *v)
	}
	if v := opts.TopK; v != nil {
		bad(*v <= 0, "top_k must be positive, got %d", *v)
	}
	if v := opts.RepetitionPenalty; v != nil {
		bad(!finite(*v) || *v <= 0, "repetition_penalty must be positive, got %v", *v)
	}
	if v := opts.PresencePenalty; v != nil {
		bad(!finite(*v) || *v < -2 || *v > 2, "presence_penalty must be in -2–2, got %v", *v)
	}
	if v := opts.ReasoningEffort; v != "" {
		bad(!slices.Contains(reasoningEfforts, v), "reasoning_effort must be one of %s, got %q", strings.Join(reasoningEfforts, ", "), v)
	}
	if len(problems) > 0 {
		return fmt.Errorf("model profile %s: %s", p.Name, strings.Join(problems, "; "))
	}
	return nil
}
