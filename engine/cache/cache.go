// Package cache is the action cache: the trajectory of a goal run that
// passed (each tool call with what it was made on), stored beside the
// scenario as plain files a team can commit, so the next run can replay
// the calls without asking the model while the screen still fits them.
//
// The package knows files, hashes and pixels; the engine decides what
// fits and what runs. Nothing here ever holds a secret value: the engine
// stores refs and redacted text only.
package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Mode is how a run uses the cache.
type Mode string

// The modes: off ignores the cache; read-only replays it and never
// writes; read-write replays it and stores the trajectory of a run that
// passed.
const (
	Off       Mode = "off"
	ReadOnly  Mode = "read-only"
	ReadWrite Mode = "read-write"
)

// Modes lists the modes as the command line and the operator file spell
// them.
var Modes = []string{string(ReadWrite), string(ReadOnly), string(Off)}

// ParseMode reads a mode; "" is off.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", Off:
		return Off, nil
	case ReadOnly, ReadWrite:
		return Mode(s), nil
	}
	return Off, fmt.Errorf("want %s, got %q", strings.Join(Modes, ", "), s)
}

// Reads reports whether the mode replays what is stored.
func (m Mode) Reads() bool { return m == ReadOnly || m == ReadWrite }

// Writes reports whether the mode stores a passing run's trajectory.
func (m Mode) Writes() bool { return m == ReadWrite }

// Schema names the trajectory file's format.
const Schema = "kasmrt.cache/v1"

// Trajectory is one scenario's cached run: its calls in order and how the
// model ended the loop.
type Trajectory struct {
	Schema string `json:"schema"`
	// Key is the scenario's identity the trajectory belongs to.
	Key      string    `json:"key"`
	Scenario string    `json:"scenario"`
	Stored   time.Time `json:"stored"`
	Steps    []Step    `json:"steps"`
	// End is the model's verdict that ended the loop, when one did; a
	// replay that reaches the end of Steps ends the loop the same way.
	End *End `json:"end,omitempty"`
}

// Step is one tool call with what it was made on.
type Step struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
	// Status is how the call ended (events' step statuses): a replayed
	// call that ends otherwise no longer does what it did.
	Status string `json:"status"`
	// Window is the focused window (title and class) when the call was
	// chosen, "" when there was none.
	Window string `json:"window,omitempty"`
	// Focus is where typed keys went (the focused control or page
	// element), as the runtime describes it.
	Focus string `json:"focus,omitempty"`
	// Screen is the perceptual hash (Hash) of the screen the call was
	// chosen on, "" when there was no capture yet.
	Screen string `json:"screen,omitempty"`
	// Control is click_element's control as it was found.
	Control *Control `json:"control,omitempty"`
	// Target is a cdp target's element as the page showed it.
	Target *Target `json:"target,omitempty"`
	// Point is where a click_grounded call clicked, and Crop the file
	// beside the trajectory holding the screen around it (none when a
	// secret may show on that screen).
	Point *Point `json:"point,omitempty"`
	Crop  string `json:"crop,omitempty"`
}

// Control is an accessible control by its name and role.
type Control struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

// Target is a page element behind a cdp target: whether it was there and
// its text.
type Target struct {
	Name  string `json:"name"`
	Found bool   `json:"found"`
	Text  string `json:"text,omitempty"`
}

// Point is a position on the screen in pixels.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// End is how the model ended the loop.
type End struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Window and Screen are what the verdict was recorded on, as a
	// Step's: a replay ends the loop only while they still fit.
	Window string `json:"window,omitempty"`
	Screen string `json:"screen,omitempty"`
}

// Dir is the cache folder beside a scenario file: NAME.kasmrt-cache for
// NAME.yaml.
func Dir(scenarioFile string) string {
	base := filepath.Base(scenarioFile)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return filepath.Join(filepath.Dir(scenarioFile), base+".kasmrt-cache")
}

// fileName is the trajectory's file in the cache folder for a key.
func fileName(key string) string { return short(key) + ".json" }

// CropName is the file name of step n's crop for a key.
func CropName(key string, n int) string { return fmt.Sprintf("%s.step%d.png", short(key), n) }

func short(key string) string {
	if len(key) > 16 {
		return key[:16]
	}
	return key
}

// Load reads the trajectory stored for key in dir; it is nil, with no
// error, when there is none.
func Load(dir, key string) (*Trajectory, error) {
	path := filepath.Join(dir, fileName(key))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the action cache: %w", err)
	}
	var t Trajectory
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("read the action cache %s: %w", path, err)
	}
	if t.Schema != Schema || t.Key != key {
		// Another format or another scenario's file under a colliding
		// name: not this scenario's trajectory.
		return nil, nil
	}
	return &t, nil
}

// ReadCrop reads a crop file of the cache folder.
func ReadCrop(dir, name string) ([]byte, error) {
	if name == "" || filepath.Base(name) != name {
		return nil, fmt.Errorf("read the action cache's crop %q: not a file of the cache folder", name)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("read the action cache's crop: %w", err)
	}
	return data, nil
}

// Store writes t, and its crops by file name, into dir, replacing what
// was stored for its key: the crops of the old trajectory that the new
// one does not use are removed. Each file is written whole (a temporary
// file renamed), so a reader never sees half of one.
func Store(dir string, t Trajectory, crops map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create the action cache folder: %w", err)
	}
	t.Schema = Schema
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the action cache: %w", err)
	}
	for name, png := range crops {
		if err := writeFile(filepath.Join(dir, name), png); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(dir, fileName(t.Key)), append(data, '\n')); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, short(t.Key)+".step*.png"))
	for _, path := range old {
		if _, used := crops[filepath.Base(path)]; !used {
			_ = os.Remove(path) // a stale crop only takes space
		}
	}
	return nil
}

func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write the action cache: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write the action cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write the action cache: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write the action cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write the action cache: %w", err)
	}
	return nil
}
