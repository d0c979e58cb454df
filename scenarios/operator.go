package scenarios

// Defaults of the budgets and the model configuration
// (docs/architecture.md, "The rules"; docs/language.md).
const (
	DefaultMaxIterations     = 25
	DefaultMaxRetriesPerStep = 3
	DefaultWaitToolMaxS      = 30
	DefaultGroundingAttempts = 2
	DefaultModelTimeoutS     = 600
	DefaultModelRetry        = 8
	DefaultDisableAfter      = 2
	DefaultKeepImages        = 3
	DefaultDeadlineS         = 600
	DeadlineReserveS         = 30
	DefaultStartupTimeoutS   = 15
	DefaultToolTimeoutS      = 30
	DefaultAppLogMaxBytes    = 16 << 20
	DefaultReplyMaxBytes     = 8 << 10
	// DefaultContextReserve is the reply's share of max_context_length
	// when model.max_tokens is unset: the servers' usual default output
	// budget.
	DefaultContextReserve = 4096

	// EnvVisionEndpoint and EnvDeadline are the environment variables the
	// runtime reads.
	EnvVisionEndpoint = "KASM_RUNTIME_VISION_ENDPOINT"
	EnvDeadline       = "KASM_RUNTIME_DEADLINE_S"
)

// Operator is the operator file: how this machine runs scenarios (budgets,
// the model, the session, the inbox), separate from what a scenario tests.
type Operator struct {
	Pos     Pos           `yaml:"-"`
	Runner  RunnerConfig  `yaml:"runner"`
	Desktop DesktopConfig `yaml:"session"`
	Model   ModelConfig   `yaml:"model"`
	Tools   ToolsConfig   `yaml:"tools"`
	Memory  MemoryConfig  `yaml:"memory"`
	Inbox   InboxConfig   `yaml:"inbox"`
	// Services bounds the requests to each capacity group at once, across
	// every run in the process (docs/language.md, "services").
	Services map[string]ServiceConfig `yaml:"services"`
	// Cache is how goal runs use the action cache beside the scenario:
	// read-write, read-only or off (the default; docs/language.md,
	// "cache").
	Cache string `yaml:"cache"`

	// File is where the operator file was loaded from ("" for defaults).
	File string `yaml:"-"`
	// DeadlineS is the whole-run deadline from KASM_RUNTIME_DEADLINE_S.
	DeadlineS float64 `yaml:"-"`
	// EndpointFromEnv records that the model endpoint came from
	// KASM_RUNTIME_VISION_ENDPOINT rather than the file.
	EndpointFromEnv bool `yaml:"-"`
	// Warnings are settings that are legal but risky (an inbox reachable
	// from other machines); validate and run print them.
	Warnings Problems `yaml:"-"`
	// keyPos remembers where each key was written, by key path.
	keyPos map[string]Pos
}

// KeyPos returns where a key path (e.g. "model.temperature") was written,
// or the file's start when it was not.
func (o *Operator) KeyPos(path string) Pos {
	if p, ok := o.keyPos[path]; ok {
		return p
	}
	return Pos{File: o.File, Line: 1, Column: 1, Path: path}
}

// RunnerConfig holds the loop's budgets. Zero for MaxToolErrors and
// MaxHoldS means unbounded.
type RunnerConfig struct {
	Pos               Pos     `yaml:"-"`
	MaxIterations     int     `yaml:"max_iterations"`
	MaxRetriesPerStep int     `yaml:"max_retries_per_step"`
	MaxToolErrors     int     `yaml:"max_tool_errors"`
	MaxHoldS          float64 `yaml:"max_hold_s"`
	WaitToolMaxS      float64 `yaml:"wait_tool_max_s"`
	GroundingAttempts int     `yaml:"grounding_attempts"`
	Respond           bool    `yaml:"respond"`
	SettleIntervalMS  int     `yaml:"settle_interval_ms"`
	SettleCapMS       int     `yaml:"settle_cap_ms"`
	// SettleQuietMS is how long nothing may be drawn for the screen to
	// count as settled, where the X server reports drawing (DAMAGE).
	SettleQuietMS int `yaml:"settle_quiet_ms"`
	// SettleResponseMS is how long an action waits for the screen to
	// start changing before its screen is taken as unchanged (DAMAGE).
	SettleResponseMS int `yaml:"settle_response_ms"`
	// AppLogMaxBytes caps app.log; past it the start and the most recent
	// output are kept and the cut is marked. Zero means the default.
	AppLogMaxBytes int64 `yaml:"app_log_max_bytes"`
}

// DesktopConfig is the operator file's session: block: the desktop the
// application runs on — the display server (an embedded Xvfb unless a
// display is given), its window manager, the accessibility bus and the
// application's isolated home.
type DesktopConfig struct {
	Pos     Pos    `yaml:"-"`
	Display string `yaml:"display"`
	Width   int    `yaml:"width"`
	Height  int    `yaml:"height"`
	Depth   int    `yaml:"depth"`
	// Accessibility lets the run look for the app's named controls over
	// AT-SPI (click_element), starting a private session bus when there is
	// none. Default true.
	Accessibility *bool `yaml:"accessibility"`
	// WindowManager is run on an embedded Xvfb: openbox (the default) or
	// none.
	WindowManager string `yaml:"window_manager"`
	// Desktop is the kind of session the run starts: x11 (the default, an
	// embedded Xvfb or a given display) or wayland (a headless sway of the
	// run's own, the application a native Wayland client).
	Desktop string `yaml:"desktop"`
	// Isolate gives the application and declared tools a HOME, XDG
	// directories and TMPDIR of their own (default true).
	Isolate *bool `yaml:"isolate"`
	// Home is the directory used as that HOME instead of a fresh one under
	// the report directory; relative to the operator file.
	Home string `yaml:"home"`
}

// ModelConfig is the vision-language model endpoint and how to call it.
type ModelConfig struct {
	Pos                Pos      `yaml:"-"`
	Endpoint           string   `yaml:"endpoint"`
	Profile            string   `yaml:"profile"`
	Name               string   `yaml:"name"` // the served model ID, overriding the profile's
	Key                string   `yaml:"key"`
	Timeout            float64  `yaml:"timeout"`
	Retry              *int     `yaml:"retry"`
	DisableAfter       int      `yaml:"disable_after"`
	PairedSamplingSeed bool     `yaml:"paired_sampling_seed"`
	MaxTokens          *int     `yaml:"max_tokens"`
	Temperature        *float64 `yaml:"temperature"`
	TopP               *float64 `yaml:"top_p"`
	TopK               *int     `yaml:"top_k"`
	RepetitionPenalty  *float64 `yaml:"repetition_penalty"`
	PresencePenalty    *float64 `yaml:"presence_penalty"`
	ReasoningEffort    string   `yaml:"reasoning_effort"`
	// ToolChoice is sent as tool_choice: auto (the default), required or
	// none, as the profile accepts.
	ToolChoice string `yaml:"tool_choice"`
	// MaxContextLength is the model's context in tokens, the reply's
	// max_tokens included; when set, the runtime trims each request to fit
	// by its own estimate. Unset leaves the limit to the server.
	MaxContextLength *int `yaml:"max_context_length"`
	// Service is the endpoint's capacity group (services.<group>);
	// DefaultModelService when empty.
	Service string `yaml:"service"`
}

// ToolsConfig lets the operator remove built-in tools.
type ToolsConfig struct {
	Pos      Pos      `yaml:"-"`
	Disabled []string `yaml:"disabled"`
}

// MemoryConfig controls what the model's context keeps
// (docs/architecture.md, "The model side").
type MemoryConfig struct {
	Pos        Pos    `yaml:"-"`
	EmitPolicy string `yaml:"emit_policy"` // always | on_change
	KeepImages int    `yaml:"keep_images"`
	// ReplyMaxBytes caps each model reply's text as the history keeps it
	// for later requests. Zero means the default.
	ReplyMaxBytes int `yaml:"reply_max_bytes"`
}

// InboxConfig gives the run an inbox for ask_human. A session token or a
// messaging token makes one.
type InboxConfig struct {
	Pos            Pos     `yaml:"-"`
	SessionToken   string  `yaml:"session_token"`
	MessagingToken string  `yaml:"messaging_token"`
	Listen         string  `yaml:"listen"`
	AnswerTimeoutS float64 `yaml:"answer_timeout_s"`
	// Notify tells someone elsewhere that a question waits.
	Notify NotifyConfig `yaml:"notify"`
}

// HasInbox reports whether ask_human can be offered.
func (o *Operator) HasInbox() bool {
	return o.Inbox.SessionToken != "" || o.Inbox.MessagingToken != ""
}

// HasModel reports whether a model endpoint is configured.
func (o *Operator) HasModel() bool { return o.Model.Endpoint != "" }

// ModelRetry returns the configured retry count or its default.
func (o *Operator) ModelRetry() int {
	if o.Model.Retry == nil {
		return DefaultModelRetry
	}
	return *o.Model.Retry
}

// applyDefaults fills in everything the file left out.
func (o *Operator) applyDefaults() {
	r := &o.Runner
	setDefault(&r.MaxIterations, DefaultMaxIterations)
	setDefault(&r.MaxRetriesPerStep, DefaultMaxRetriesPerStep)
	setDefault(&r.WaitToolMaxS, DefaultWaitToolMaxS)
	setDefault(&r.GroundingAttempts, DefaultGroundingAttempts)
	setDefault(&r.SettleIntervalMS, 60)
	setDefault(&r.SettleCapMS, 2000)
	setDefault(&r.SettleQuietMS, 30)
	setDefault(&r.SettleResponseMS, 300)
	setDefault(&r.AppLogMaxBytes, DefaultAppLogMaxBytes)
	s := &o.Desktop
	setDefault(&s.Width, 1280)
	setDefault(&s.Height, 800)
	setDefault(&s.Depth, 24)
	m := &o.Model
	setDefault(&m.Timeout, DefaultModelTimeoutS)
	setDefault(&m.DisableAfter, DefaultDisableAfter)
	setDefault(&o.Memory.KeepImages, DefaultKeepImages)
	setDefault(&o.Memory.ReplyMaxBytes, DefaultReplyMaxBytes)
	if o.Memory.EmitPolicy == "" {
		o.Memory.EmitPolicy = "always"
	}
	setDefault(&o.DeadlineS, DefaultDeadlineS)
}

func setDefault[T int | int64 | float64](p *T, v T) {
	if *p == 0 {
		*p = v
	}
}

// InboxToken is the token that guards the inbox's HTTP routes, and the key
// it came from: inbox.session_token, else inbox.messaging_token.
func (o *Operator) InboxToken() (token, key string) {
	if o.Inbox.SessionToken != "" {
		return o.Inbox.SessionToken, "inbox.session_token"
	}
	return o.Inbox.MessagingToken, "inbox.messaging_token"
}
