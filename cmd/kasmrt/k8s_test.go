package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/suite"
)

const (
	k8sPass = "name: passes\napp:\n  command: [xmessage, -geometry, +40+40, hello]\n  window: {class: Xmessage}\nsteps:\n  - observe_screen: {}\n"
	k8sFail = "name: fails\napp:\n  command: [xmessage, -geometry, +100+60, -buttons, \"ok:3\", hi]\n  window: {class: Xmessage}\n" +
		"click_targets:\n  ok_button: {x: 16, y: 38, description: the ok button}\nsteps:\n  - observe_screen: {}\n  - click: ok_button\n  - wait: 1\n"
	k8sOperator = "runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession:\n  width: 640\n  height: 400\n"
	k8sSuite    = "name: Nightly GUI\noperator: operator.yaml\nscenarios:\n  - path: pass.yaml\n  - path: fail.yaml\n    repeat: 2\n"
)

// emittedJob emits the suite in dir, from dir as the command's working
// directory, as a Job (with extra flags added) and decodes it back into
// the Kubernetes type, refusing unknown fields.
func emittedJob(t *testing.T, dir string, shards string, extra ...string) *batchv1.Job {
	t.Helper()
	args := []string{"suite", "suite.yaml", "--emit", "k8s", "--image", "registry.example/kasmrt:1",
		"--shards", shards, "--parallelism", "2", "--workers", "1", "--env-secret", "kasmrt-model"}
	cmd := exec.Command(kasmrtBinary(t), append(args, extra...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("--emit k8s: %v\n%s", err, stderr.String())
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(stdout), &job); err != nil {
		t.Fatalf("the emitted YAML is not a batch/v1 Job: %v\n%s", err, stdout)
	}
	return &job
}

// The Job is an Indexed Job with one index per shard, whose pod failure
// policy fails the Job on bad input, fails only the index on a verdict,
// and retries disruptions without counting them.
func TestEmitK8sJob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"pass.yaml": k8sPass, "fail.yaml": k8sFail, "operator.yaml": k8sOperator, "suite.yaml": k8sSuite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	job := emittedJob(t, dir, "3")
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || job.Name != "nightly-gui" {
		t.Errorf("kind %s %s name %q", job.APIVersion, job.Kind, job.Name)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 3 || *s.Parallelism != 2 || s.BackoffLimitPerIndex == nil {
		t.Errorf("spec = %+v", s)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "kasmrt-reports" {
		t.Errorf("pod = %+v", pod)
	}
	c := pod.Containers[0]
	if c.EnvFrom[0].SecretRef.Name != "kasmrt-model" || c.Env[0].Name != suite.EnvJobIndex || !slices.Contains(c.Args, "job/3") {
		t.Errorf("container = %+v", c)
	}
	// Kubernetes applies the first rule that matches a failed pod, so the
	// order matters: an evicted pod's suite ends on SIGTERM with exit 2,
	// which must not fail its index.
	action := func(code int32, disrupted bool) batchv1.PodFailurePolicyAction {
		for _, r := range s.PodFailurePolicy.Rules {
			if r.OnExitCodes != nil && slices.Contains(r.OnExitCodes.Values, code) {
				return r.Action
			}
			for _, p := range r.OnPodConditions {
				if disrupted && p.Type == corev1.DisruptionTarget && p.Status == corev1.ConditionTrue {
					return r.Action
				}
			}
		}
		return batchv1.PodFailurePolicyActionCount
	}
	for _, c := range []struct {
		code      int32
		disrupted bool
		want      batchv1.PodFailurePolicyAction
	}{
		{3, false, batchv1.PodFailurePolicyActionFailJob},
		{1, false, batchv1.PodFailurePolicyActionFailIndex},
		{2, false, batchv1.PodFailurePolicyActionFailIndex},
		{4, false, batchv1.PodFailurePolicyActionFailIndex},
		{137, false, batchv1.PodFailurePolicyActionCount},
		{2, true, batchv1.PodFailurePolicyActionIgnore},
		{137, true, batchv1.PodFailurePolicyActionIgnore},
	} {
		if got := action(c.code, c.disrupted); got != c.want {
			t.Errorf("exit %d (evicted %v): %s, want %s", c.code, c.disrupted, got, c.want)
		}
	}
	if !slices.Contains(c.Args, "--resume-if-any") {
		t.Errorf("args %q: a retried index would find its output non-empty and be refused", c.Args)
	}
	if code, _, stderr := kasmrt(t, "suite", filepath.Join(dir, "suite.yaml"), "--emit", "k8s"); code != exitBadInput || !strings.Contains(stderr, "--image") {
		t.Errorf("--emit k8s without --image: exit %d %s", code, stderr)
	}
}

// writeK8sSuite writes the suite the Job tests emit into a new directory.
func writeK8sSuite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"pass.yaml": k8sPass, "fail.yaml": k8sFail, "operator.yaml": k8sOperator, "suite.yaml": k8sSuite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// An Xvfb+Chromium pod asks for what its workers need and is bounded by
// limits (memory for /dev/shm too); the finished Job is cleaned up after
// a TTL and a hung one stopped at a deadline. Flags override each; the
// defaults scale with --workers.
func TestEmitK8sResourcesTTLDeadline(t *testing.T) {
	t.Parallel()
	dir := writeK8sSuite(t)
	qty := func(l corev1.ResourceList, name corev1.ResourceName) string {
		q, ok := l[name]
		if !ok {
			return "none"
		}
		return q.String()
	}
	for _, tc := range []struct {
		name                        string
		flags                       []string
		cpu, memory, cpuMax, memMax string
		ttlSeconds, deadlineSeconds int64
	}{
		{name: "defaults", cpu: "1", memory: "1Gi", cpuMax: "2", memMax: "2Gi", ttlSeconds: 86400, deadlineSeconds: 6 * 3600},
		{name: "three workers", flags: []string{"--workers", "3"}, cpu: "3", memory: "3Gi", cpuMax: "6", memMax: "6Gi",
			ttlSeconds: 86400, deadlineSeconds: 6 * 3600},
		{name: "flags", flags: []string{"--cpu", "1500m", "--memory", "3Gi", "--cpu-limit", "4", "--memory-limit", "6Gi",
			"--ttl", "1h", "--deadline", "90m"}, cpu: "1500m", memory: "3Gi", cpuMax: "4", memMax: "6Gi", ttlSeconds: 3600, deadlineSeconds: 5400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := emittedJob(t, dir, "2", tc.flags...)
			c := job.Spec.Template.Spec.Containers[0]
			got := []string{qty(c.Resources.Requests, corev1.ResourceCPU), qty(c.Resources.Requests, corev1.ResourceMemory),
				qty(c.Resources.Limits, corev1.ResourceCPU), qty(c.Resources.Limits, corev1.ResourceMemory)}
			if want := []string{tc.cpu, tc.memory, tc.cpuMax, tc.memMax}; !slices.Equal(got, want) {
				t.Errorf("requests cpu, memory and limits cpu, memory %q, want %q", got, want)
			}
			if s := job.Spec; s.TTLSecondsAfterFinished == nil || int64(*s.TTLSecondsAfterFinished) != tc.ttlSeconds ||
				s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != tc.deadlineSeconds {
				t.Errorf("ttlSecondsAfterFinished %v activeDeadlineSeconds %v, want %d %d",
					s.TTLSecondsAfterFinished, s.ActiveDeadlineSeconds, tc.ttlSeconds, tc.deadlineSeconds)
			}
			shm := false
			for _, m := range c.VolumeMounts {
				shm = shm || m.MountPath == "/dev/shm"
			}
			if !shm {
				t.Error("no /dev/shm for Chromium beyond the container's 64 MiB")
			}
		})
	}
	for _, bad := range [][]string{{"--cpu", "0"}, {"--memory", "lots"}, {"--cpu", "4", "--cpu-limit", "2"}, {"--ttl", "-1h"}, {"--deadline", "0s"}} {
		args := append([]string{"suite", filepath.Join(dir, "suite.yaml"), "--emit", "k8s", "--image", "img"}, bad...)
		if code, stdout, stderr := kasmrt(t, args...); code != exitBadInput || !strings.Contains(stderr, bad[len(bad)-2]) || stdout != "" {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %s; want exit 3 naming the flag", bad, code, len(stdout), stderr)
		}
	}
}

// The local simulation: the Job's container command runs once per index
// with JOB_COMPLETION_INDEX set, as the Job controller would run it; the
// shards' outputs merged are the unsharded suite's result.
func TestEmitK8sSimulated(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xmessage")
	dir := t.TempDir()
	for name, body := range map[string]string{"pass.yaml": k8sPass, "fail.yaml": k8sFail, "operator.yaml": k8sOperator, "suite.yaml": k8sSuite} {
		testkit.WriteFile(t, dir, name, body)
	}
	bin := kasmrtBinary(t)
	job := emittedJob(t, dir, "2")
	// The indexes run at once, as the Job's pods do, and so does the
	// unsharded suite they are compared with.
	whole := exec.Command(bin, "suite", "suite.yaml", "--out", filepath.Join(dir, "whole"), "--headless")
	whole.Dir = dir
	if err := whole.Start(); err != nil {
		t.Fatal(err)
	}
	type indexRun struct {
		cmd  *exec.Cmd
		args []string
		out  strings.Builder
	}
	var indexes []*indexRun
	volume := filepath.Join(dir, "volume")
	c := job.Spec.Template.Spec.Containers[0]
	varRE := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var shardOuts []string
	for index := range int(*job.Spec.Completions) {
		env := map[string]string{suite.EnvJobIndex: string(rune('0' + index))}
		var args []string
		for _, a := range c.Args {
			// Kubernetes expands $(VAR) from the container's environment.
			a = varRE.ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] })
			if rest, ok := strings.CutPrefix(a, c.VolumeMounts[0].MountPath); ok {
				a = volume + rest
				if strings.Contains(rest, "shard-") {
					shardOuts = append(shardOuts, a)
				}
			}
			args = append(args, a)
		}
		ix := &indexRun{cmd: exec.Command(bin, args...), args: args}
		ix.cmd.Dir = dir // the image's working directory holds the same files
		ix.cmd.Env = append(os.Environ(), suite.EnvJobIndex+"="+env[suite.EnvJobIndex])
		ix.cmd.Stdout, ix.cmd.Stderr = &ix.out, &ix.out
		if err := ix.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, ix)
	}
	for i, ix := range indexes {
		err := ix.cmd.Wait()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if code := ix.cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
			t.Fatalf("index %d: exit %d\n%s", i, code, ix.out.String())
		}
	}
	_ = whole.Wait()
	if len(shardOuts) != 2 {
		t.Fatalf("shard outputs %v", shardOuts)
	}
	// A retried pod (its node drained, say) runs the same command on the
	// output its first try left: it continues the shard instead of
	// refusing the non-empty directory, which would fail the whole Job.
	retry := exec.Command(bin, indexes[0].args...)
	retry.Dir = dir
	retry.Env = append(os.Environ(), suite.EnvJobIndex+"=0")
	if out, _ := retry.CombinedOutput(); retry.ProcessState.ExitCode() != 0 && retry.ProcessState.ExitCode() != 1 {
		t.Fatalf("a retried index: exit %d\n%s", retry.ProcessState.ExitCode(), out)
	}
	merged := filepath.Join(dir, "merged")
	if out, err := exec.Command(bin, append([]string{"merge", "--out", merged}, shardOuts...)...).CombinedOutput(); err != nil && !strings.Contains(string(out), "3 runs") {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	a, err := suite.ReadSummary(merged)
	if err != nil {
		t.Fatal(err)
	}
	b, err := suite.ReadSummary(filepath.Join(dir, "whole"))
	if err != nil {
		t.Fatal(err)
	}
	runs := func(s *suite.Summary) []string {
		var out []string
		for _, r := range s.Runs {
			out = append(out, r.Key+"="+string(r.Verdict)+"/"+r.IdentitySHA256)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(runs(a), runs(b)) || a.ExitCode != b.ExitCode || a.PlanSHA256 != b.PlanSHA256 || a.ExitCode != 1 {
		t.Errorf("merged shards:\n%v exit %d\nunsharded:\n%v exit %d", runs(a), a.ExitCode, runs(b), b.ExitCode)
	}
}
