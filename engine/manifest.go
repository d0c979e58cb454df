package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/engine/vision"
	"github.com/kasmrt/kasmrt/scenarios"
)

// ManifestSchema names the manifest.json format.
const ManifestSchema = "kasmrt.manifest/v1"

// ManifestFile is the manifest's name in a report directory.
const ManifestFile = "manifest.json"

// sampleSeedStride separates the paired seeds of successive samples, so
// sample k's seeds never meet sample k+1's within a run's iterations.
const sampleSeedStride = 1_000_003

// PairedSeed is the Chat Completions seed of one request: derived from the
// scenario's name, the loop iteration and the sample index, so repeated
// samples differ and a re-run of the same sample sends the same seeds.
func PairedSeed(scenario string, iteration, sample int) int64 {
	h := fnv.New64a()
	h.Write([]byte(scenario))
	return int64(h.Sum64()&0x7fffffff) + int64(iteration) + int64(sample)*sampleSeedStride
}

// Identity is what makes two runs the same experiment: the same program,
// the same scenario, the same configuration, the same prompts and the same
// sample. Resume compares it field by field.
type Identity struct {
	KasmrtVersion string         `json:"kasmrt_version"`
	Scenario      ScenarioHashes `json:"scenario"`
	Operator      OperatorHash   `json:"operator"`
	Profile       ProfileHashes  `json:"profile"`
	Seed          SeedInfo       `json:"seed"`
}

// ScenarioHashes identify the scenario file and what it resolved to.
type ScenarioHashes struct {
	Name string `json:"name"`
	File string `json:"file"`
	// SHA256 is the digest of the file's bytes.
	SHA256 string `json:"sha256"`
	// ResolvedSHA256 is the digest of the loaded scenario with its
	// placeholders resolved, independent of comments and layout; secret
	// values are not part of it, only where they come from.
	ResolvedSHA256 string `json:"resolved_sha256"`
}

// OperatorHash identifies the operator configuration in effect.
type OperatorHash struct {
	File string `json:"file"`
	// IdentitySHA256 is the digest of the resolved configuration (defaults
	// filled in) without the model key, the inbox tokens or any credentials
	// in the endpoint.
	IdentitySHA256 string `json:"identity_sha256"`
}

// ProfileHashes name the model profile and every system prompt the run can
// send, by role (loop, locate, judge). Runs without a model send none.
type ProfileHashes struct {
	Name    string            `json:"name"`
	Prompts map[string]string `json:"prompts"`
}

// SeedInfo is how the run's requests are seeded.
type SeedInfo struct {
	// Paired is model.paired_sampling_seed: without it no seed is sent.
	Paired bool `json:"paired"`
	// First is the seed of the first request when Paired.
	First *int64 `json:"first,omitempty"`
	// SampleIndex numbers the sample among repeats of the scenario.
	SampleIndex int `json:"sample_index"`
}

// Manifest is manifest.json: the run's identity, its hash, and how it
// ended. Ended is nil while the run is going (or when it was killed).
type Manifest struct {
	Schema string `json:"schema"`
	Identity
	IdentitySHA256 string         `json:"identity_sha256"`
	Started        time.Time      `json:"started"`
	Ended          *time.Time     `json:"ended"`
	Verdict        events.Verdict `json:"verdict"`
	Outcome        events.Outcome `json:"outcome"`
	DurationMS     int64          `json:"duration_ms"`
	// Tokens sums the usage's token counts, for suite summaries.
	Tokens float64 `json:"tokens"`
}

// Complete reports whether the run ended with a verdict.
func (m Manifest) Complete() bool { return m.Ended != nil && m.Verdict != "" }

// IdentityOf computes the identity a run of files with opts would have.
func IdentityOf(files *scenarios.Files, opts Options) (Identity, error) {
	sc, op := files.Scenario, files.Operator
	resolved, err := canonicalSHA256(sc)
	if err != nil {
		return Identity{}, fmt.Errorf("hash the resolved scenario: %w", err)
	}
	opHash, err := canonicalSHA256(operatorForIdentity(op))
	if err != nil {
		return Identity{}, fmt.Errorf("hash the operator configuration: %w", err)
	}
	id := Identity{
		KasmrtVersion: opts.Version,
		Scenario:      ScenarioHashes{Name: sc.Name, File: sc.File, SHA256: sc.SHA256, ResolvedSHA256: resolved},
		Operator:      OperatorHash{File: op.File, IdentitySHA256: opHash},
		Seed:          SeedInfo{Paired: op.Model.PairedSamplingSeed, SampleIndex: opts.SampleIndex},
	}
	profile, err := model.LookupProfile(op.Model.Profile)
	if err != nil {
		return Identity{}, err
	}
	id.Profile = ProfileHashes{Name: profile.Name, Prompts: map[string]string{}}
	if op.HasModel() {
		// The prompt as the run sends it: without the rules of the tools
		// the operator removed.
		id.Profile.Prompts["loop"] = textSHA256(profile.Prompt.Without(op.Tools.Disabled).Text)
		for role, text := range vision.SystemPrompts() {
			id.Profile.Prompts[role] = textSHA256(text)
		}
	}
	if id.Seed.Paired {
		first := PairedSeed(sc.Name, 0, opts.SampleIndex)
		id.Seed.First = &first
	}
	return id, nil
}

// SHA256 is the hex digest of the identity's canonical JSON.
func (id Identity) SHA256() string {
	sum, err := canonicalSHA256(id)
	if err != nil {
		// Identity holds only strings, numbers and maps of strings.
		panic(fmt.Sprintf("hash identity: %v", err))
	}
	return sum
}

// Differences names the identity fields (as JSON paths) that differ
// between id and other, sorted.
func (id Identity) Differences(other Identity) []string {
	a, b := flatten(id), flatten(other)
	var diff []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !reflect.DeepEqual(v, w) {
			diff = append(diff, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return diff
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, fmt.Errorf("read manifest: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("read manifest %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Schema != ManifestSchema {
		return m, fmt.Errorf("read manifest %s: schema %q, want %q", filepath.Join(dir, ManifestFile), m.Schema, ManifestSchema)
	}
	return m, nil
}

// runManifest is the manifest of the run in progress.
type runManifest struct {
	dir string
	m   Manifest
	err error
}

// startManifest writes the manifest of a run that has begun: its identity
// and start, no end yet, so a run killed mid-way is seen as unfinished.
func (r *Runner) startManifest() *runManifest {
	rm := &runManifest{dir: r.opts.ReportDir}
	id, err := IdentityOf(r.files, r.opts)
	if err != nil {
		rm.err = err
		return rm
	}
	rm.m = Manifest{Schema: ManifestSchema, Identity: id, IdentitySHA256: id.SHA256(), Started: time.Now().UTC()}
	rm.err = rm.write()
	return rm
}

// end records how the run ended.
func (rm *runManifest) end(rep report.Report, res Result) {
	ended := time.Now().UTC()
	if rep.Timing.Ended != nil {
		ended = rep.Timing.Ended.UTC()
	}
	if !rep.Timing.Started.IsZero() {
		rm.m.Started = rep.Timing.Started.UTC()
	}
	rm.m.Ended = &ended
	rm.m.Verdict, rm.m.Outcome = res.Verdict, res.Outcome
	rm.m.DurationMS = ended.Sub(rm.m.Started).Milliseconds()
	for k, v := range rep.Usage.Total {
		if k == "total_tokens" {
			rm.m.Tokens += v
		}
	}
}

// write writes manifest.json atomically. A manifest that could not be
// computed is an error of the run's report.
func (rm *runManifest) write() error {
	if rm.err != nil && rm.m.Schema == "" {
		return fmt.Errorf("write manifest: %w", rm.err)
	}
	b, err := json.MarshalIndent(rm.m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	tmp, err := os.CreateTemp(rm.dir, ".manifest-*.json")
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	defer os.Remove(tmp.Name())
	// A file whose write or close failed may be partial: it is never
	// renamed into place, so resume never reads half a manifest.
	_, werr := tmp.Write(append(b, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(rm.dir, ManifestFile)); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// operatorForIdentity is the operator configuration without what may not
// be stored or that does not change what a run does: credentials, tokens,
// warnings and where each key was written.
func operatorForIdentity(op *scenarios.Operator) scenarios.Operator {
	c := *op
	c.Model.Key = ""
	c.Inbox.SessionToken, c.Inbox.MessagingToken = "", ""
	if w := c.Inbox.Notify.Webhook; w != nil {
		c.Inbox.Notify.Webhook = &scenarios.WebhookConfig{TimeoutS: w.TimeoutS}
	}
	c.Warnings = nil
	c.File = ""
	c.EndpointFromEnv = false
	// Capacity bounds say how this machine shares its backends, not what
	// a run does: a suite resumed under other bounds gives the same runs.
	c.Services, c.Model.Service = nil, ""
	if u, err := url.Parse(c.Model.Endpoint); err == nil && (u.User != nil || u.RawQuery != "") {
		u.User, u.RawQuery = nil, ""
		c.Model.Endpoint = u.String()
	}
	return c
}

// canonicalSHA256 hashes v's JSON form with the source positions (Pos,
// ArgPos) and the file fields left out and the object keys sorted, so the
// hash follows the content, not its layout in the file.
func canonicalSHA256(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return "", err
	}
	if m, ok := tree.(map[string]any); ok {
		// The file's own path and digest are recorded beside the hash, and
		// the loader's warnings (positioned, so they move with comments)
		// are what the file says, not more of it.
		delete(m, "File")
		delete(m, "SHA256")
		delete(m, "Warnings")
	}
	b, err = json.Marshal(dropPositions(tree))
	if err != nil {
		return "", err
	}
	return textSHA256(string(b)), nil
}

func dropPositions(v any) any {
	switch t := v.(type) {
	case map[string]any:
		delete(t, "Pos")
		delete(t, "ArgPos")
		for k, e := range t {
			t[k] = dropPositions(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropPositions(e)
		}
	}
	return v
}

func textSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// flatten maps an identity to its leaf values by JSON path.
func flatten(id Identity) map[string]any {
	b, _ := json.Marshal(id)
	var tree map[string]any
	_ = json.Unmarshal(b, &tree)
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, e := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, e)
			}
			return
		}
		out[prefix] = v
	}
	walk("", tree)
	return out
}
