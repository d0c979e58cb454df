package events

// KindBaseline is one screenshot check's comparison with its baseline.
// Baseline; Step: the step whose expect: (or the success criteria) held
// the check; Message: what was found.
const KindBaseline Kind = "baseline"

// Results of a screenshot check.
const (
	BaselineMatched  = "matched"  // within max_diff_ratio
	BaselineDiffers  = "differs"  // more pixels differ than max_diff_ratio allows
	BaselineMissing  = "missing"  // no baseline yet: the actual was kept
	BaselineWritten  = "written"  // --update-baselines wrote the actual as the baseline
	BaselineUnsteady = "unsteady" // the window never held still for two captures
)

// Baseline is baseline's payload: a screenshot check's comparison.
type Baseline struct {
	// Name is the check's name: the baseline's file name without .png.
	Name string `json:"name"`
	// Result is one of the Baseline* results.
	Result string `json:"result"`
	// File is the baseline's path (beside the scenario).
	File string `json:"file"`
	// DiffPixels of Pixels differ; DiffRatio is their share, held against
	// MaxDiffRatio with the colour Threshold.
	DiffPixels   int     `json:"diff_pixels"`
	Pixels       int     `json:"pixels"`
	DiffRatio    float64 `json:"diff_ratio"`
	MaxDiffRatio float64 `json:"max_diff_ratio"`
	Threshold    float64 `json:"threshold"`
	// SizeDiffers says the window and the baseline have different sizes.
	SizeDiffers bool `json:"size_differs,omitempty"`
	// Width and Height are the compared window's.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Expected, Actual and Diff are the images in the report directory
	// (relative to it), when the check did not match.
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	Diff     string `json:"diff,omitempty"`
}

func (Baseline) Kind() Kind { return KindBaseline }

func (p Baseline) redacted(r func(string) string) Payload {
	p.Name, p.File = r(p.Name), r(p.File)
	p.Expected, p.Actual, p.Diff = r(p.Expected), r(p.Actual), r(p.Diff)
	return p
}
