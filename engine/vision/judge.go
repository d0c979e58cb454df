package vision

import (
	"context"
	"encoding/json"
	"fmt"
	"image"

	"github.com/kasmrt/kasmrt/engine/model"
)

// Outcome is the result of judging an expectation.
type Outcome string

// The outcomes of a judgement. Only Confirmed counts as verified.
const (
	Confirmed    Outcome = "confirmed"
	Contradicted Outcome = "contradicted"
	Unavailable  Outcome = "unavailable"
)

// Judgement is the model's verdict on an expectation, with its reason.
type Judgement struct {
	Outcome Outcome
	Reason  string
}

// Judge asks whether the change expected between before and after happened.
// A malformed answer is Unavailable with a nil error; a failed model call is
// Unavailable with the call's error, so the caller can count model failures.
func Judge(ctx context.Context, t Turner, p model.Profile, before, after image.Image, expectation string) (Judgement, error) {
	b, _ := Downscale(before, p)
	a, _ := Downscale(after, p)
	bPNG, err := encodePNG(b)
	if err != nil {
		return Judgement{Outcome: Unavailable, Reason: err.Error()}, err
	}
	aPNG, err := encodePNG(a)
	if err != nil {
		return Judgement{Outcome: Unavailable, Reason: err.Error()}, err
	}
	prompt := fmt.Sprintf("The first image is the screen before an action, the second the screen after it.\n\nExpected change: %s\n\nDid the expected change happen? Answer with only a JSON object {\"met\": true or false, \"reason\": \"one short sentence\"}.", expectation)
	return ask(ctx, t, model.Request{
		System: judgeSystem,
		Messages: []model.Message{{Role: model.RoleUser, Text: prompt, Images: []model.Image{
			{Handle: "before", PNG: bPNG}, {Handle: "after", PNG: aPNG},
		}}},
	})
}

// Check asks whether img meets the expectation, for check_expectation:
// Confirmed is true, Contradicted false, Unavailable not judged. Errors are
// as for Judge.
func Check(ctx context.Context, t Turner, p model.Profile, img image.Image, expectation string) (Judgement, error) {
	sent, _ := Downscale(img, p)
	pngBytes, err := encodePNG(sent)
	if err != nil {
		return Judgement{Outcome: Unavailable, Reason: err.Error()}, err
	}
	prompt := fmt.Sprintf("Expectation: %s\n\nDoes this screen meet the expectation? Answer with only a JSON object {\"met\": true or false, \"reason\": \"one short sentence\"}.", expectation)
	return ask(ctx, t, model.Request{
		System:   judgeSystem,
		Messages: []model.Message{{Role: model.RoleUser, Text: prompt, Images: []model.Image{{PNG: pngBytes}}}},
	})
}

const judgeSystem = "You judge screenshots of applications under test. You answer with one JSON object and nothing else."

func ask(ctx context.Context, t Turner, req model.Request) (Judgement, error) {
	resp, err := t.Turn(ctx, req)
	if err != nil {
		return Judgement{Outcome: Unavailable, Reason: "model call failed"}, fmt.Errorf("judge expectation: %w", err)
	}
	return parseJudgement(resp.Text), nil
}

func parseJudgement(text string) Judgement {
	raw, ok := extractJSON(text)
	if !ok {
		return Judgement{Outcome: Unavailable, Reason: fmt.Sprintf("malformed answer: %q", clip(text))}
	}
	var v struct {
		Met    *bool  `json:"met"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil || v.Met == nil {
		return Judgement{Outcome: Unavailable, Reason: fmt.Sprintf("malformed answer: %q", clip(text))}
	}
	if *v.Met {
		return Judgement{Outcome: Confirmed, Reason: v.Reason}
	}
	return Judgement{Outcome: Contradicted, Reason: v.Reason}
}
