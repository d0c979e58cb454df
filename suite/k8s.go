package suite

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// EnvJobIndex is the variable Kubernetes sets in each pod of an Indexed
// Job to the pod's 0-based completion index.
const EnvJobIndex = "JOB_COMPLETION_INDEX"

// ShardFromJob is --shard's form "job/N": the shard is the Indexed Job's
// completion index plus one.
const ShardFromJob = "job"

// ReportsMount is where the Job mounts its reports volume.
const ReportsMount = "/reports"

// JobOptions describe the Kubernetes Job a suite is emitted as.
type JobOptions struct {
	// Name is the Job's name (default: from the suite's name).
	Name string
	// Image is the container image with kasmrt and the applications under
	// test (see the Dockerfile).
	Image string
	// Shards is the number of indexes: one pod per shard.
	Shards int
	// Parallelism bounds the pods at once (default: Shards).
	Parallelism int
	// Claim is the PersistentVolumeClaim the reports land in.
	Claim string
	// EnvSecret, when set, names a Secret whose keys become the pods'
	// environment (the model endpoint, its key).
	EnvSecret string
	// SuiteArgs are the suite's arguments and flags as the pods run them
	// (paths inside the image's working directory), without --shard and
	// --out, which the Job sets.
	SuiteArgs []string
	// Retries is backoffLimitPerIndex: how many times a crashed or killed
	// shard is tried again.
	Retries int32
	// Resources are the kasmrt container's requests and limits; see
	// WorkerResources for what a pod of workers needs.
	Resources corev1.ResourceRequirements
	// TTL is ttlSecondsAfterFinished: how long the finished Job and its
	// pods (their logs) stay before Kubernetes deletes them. The reports
	// are on the claim and outlive it. Zero or less: the default, a day.
	TTL time.Duration
	// Deadline is activeDeadlineSeconds: how long the whole Job may run,
	// retries included, before Kubernetes stops its pods. A suite that
	// hangs past it ends the Job failed instead of holding the nodes. Zero
	// or less: the default, six hours.
	Deadline time.Duration
}

// The Job's defaults when JobOptions leaves them unset.
const (
	DefaultJobTTL      = 24 * time.Hour
	DefaultJobDeadline = 6 * time.Hour
)

// What one worker of a pod runs at once (its Xvfb, the application, a
// Chromium for browser scenarios, kasmrt's share) asks for and may use. A
// scenario's screenshots, the browser and the X server's framebuffers are
// what take the memory; Chromium is what takes the CPU.
const (
	workerCPURequest    = "1"
	workerMemoryRequest = "1Gi"
	workerCPULimit      = "2"
	workerMemoryLimit   = "2Gi"
	// Chromium keeps its shared memory in /dev/shm, of which a container
	// gets 64 MiB; the Job mounts this much there instead.
	shmSize = "1Gi"
)

// WorkerResources are the requests and limits of a pod whose suite runs
// that many workers at once: each worker's share, times workers.
func WorkerResources(workers int) corev1.ResourceRequirements {
	workers = max(workers, 1)
	times := func(each string) resource.Quantity {
		q := resource.MustParse(each)
		return *resource.NewMilliQuantity(q.MilliValue()*int64(workers), q.Format)
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: times(workerCPURequest), corev1.ResourceMemory: times(workerMemoryRequest)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: times(workerCPULimit), corev1.ResourceMemory: times(workerMemoryLimit)},
	}
}

// kasmrt's exit codes as the Job's pod failure policy sees them.
var (
	// exitBadInput fails the whole Job at once: every shard would refuse
	// the same files.
	jobFailJobCodes = []int32{3}
	// A verdict is a result: the index is failed without a retry, and the
	// reports are in the volume for the merge.
	jobVerdictCodes = []int32{1, 2, 4}
)

var dnsLabelRE = regexp.MustCompile(`[^a-z0-9-]+`)

// Job builds the Indexed Job that runs a suite's shards: one completion
// index per shard, each pod running `kasmrt suite … --shard job/N` into
// its own directory of the reports volume.
func Job(o JobOptions) (*batchv1.Job, error) {
	if o.Shards < 1 || o.Shards > 1000 {
		return nil, fmt.Errorf("--shards %d: want 1 to 1000", o.Shards)
	}
	if o.Image == "" {
		return nil, fmt.Errorf("--image: the Job needs a container image (build one with the Dockerfile)")
	}
	name := strings.Trim(dnsLabelRE.ReplaceAllString(strings.ToLower(o.Name), "-"), "-")
	if name == "" {
		name = "kasmrt-suite"
	}
	if len(name) > 52 { // room for the controller's pod name suffixes
		name = strings.TrimRight(name[:52], "-")
	}
	claim := o.Claim
	if claim == "" {
		claim = "kasmrt-reports"
	}
	parallelism := int32(o.Parallelism)
	if parallelism <= 0 || parallelism > int32(o.Shards) {
		parallelism = int32(o.Shards)
	}
	completions := int32(o.Shards)
	retries := o.Retries
	ttl, deadline := o.TTL, o.Deadline
	if ttl <= 0 {
		ttl = DefaultJobTTL
	}
	if deadline <= 0 {
		deadline = DefaultJobDeadline
	}
	ttlSeconds, deadlineSeconds := int32(ttl/time.Second), int64(deadline/time.Second)
	shm := resource.MustParse(shmSize)
	resources := o.Resources
	if resources.Requests == nil && resources.Limits == nil {
		resources = WorkerResources(1)
	}
	indexed := batchv1.IndexedCompletion
	args := []string{"suite"}
	for _, a := range o.SuiteArgs {
		args = append(args, escapeK8sArg(a))
	}
	// A retried pod finds what its first try wrote: it continues the
	// shard (--resume-if-any) rather than refusing a non-empty --out.
	args = append(args, "--shard", fmt.Sprintf("%s/%d", ShardFromJob, o.Shards),
		"--out", ReportsMount+"/"+name+"/shard-$("+EnvJobIndex+")", "--resume-if-any", "--headless")
	nonRoot, noEscalation := true, false
	uid := int64(10001)
	container := corev1.Container{
		Name:       "kasmrt",
		Image:      o.Image,
		Command:    []string{"kasmrt"},
		Args:       args,
		WorkingDir: "/src",
		// Declared so $(JOB_COMPLETION_INDEX) in the arguments expands
		// whatever the cluster version injects on its own.
		Env: []corev1.EnvVar{{Name: EnvJobIndex, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
		Resources:    resources,
		VolumeMounts: []corev1.VolumeMount{{Name: "reports", MountPath: ReportsMount}, {Name: "shm", MountPath: "/dev/shm"}},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot: &nonRoot, RunAsUser: &uid, AllowPrivilegeEscalation: &noEscalation,
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	if o.EnvSecret != "" {
		container.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.EnvSecret}}}}
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": "kasmrt", "kasmrt.dev/suite": name}},
		Spec: batchv1.JobSpec{
			CompletionMode:          &indexed,
			TTLSecondsAfterFinished: &ttlSeconds,
			ActiveDeadlineSeconds:   &deadlineSeconds,
			Completions:             &completions,
			Parallelism:             &parallelism,
			BackoffLimitPerIndex:    &retries,
			// The first matching rule decides, so the disruption rule comes
			// first: an evicted pod's suite ends on SIGTERM with exit 2,
			// which the verdict rule would otherwise take as the index's
			// result.
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				// An eviction, a preemption or a node drain is not the
				// suite's doing: try the shard again without counting it.
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: &container.Name, Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: jobFailJobCodes}},
				{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: &container.Name, Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: jobVerdictCodes}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "kasmrt", "kasmrt.dev/suite": name}},
				Spec: corev1.PodSpec{
					// The pod failure policy needs pods that are not restarted
					// in place.
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{FSGroup: &uid},
					Containers:      []corev1.Container{container},
					Volumes: []corev1.Volume{
						{Name: "reports", VolumeSource: corev1.VolumeSource{
							PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
						// Counted against the container's memory limit.
						{Name: "shm", VolumeSource: corev1.VolumeSource{
							EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &shm}}},
					},
				},
			},
		},
	}
	return job, nil
}

// escapeK8sArg makes a suite argument reach kasmrt as written. Kubernetes
// expands $(VAR) in a container's args from the container's environment
// and turns $$ into $, so a path or filter holding $( would be rewritten
// (or read a variable) before kasmrt sees it. Doubling every $ is the
// one escape that is exact: $$( becomes $(, and a $$ already in the
// argument stays $$.
func escapeK8sArg(a string) string { return strings.ReplaceAll(a, "$", "$$") }

// JobYAML is the Job as YAML for kubectl apply -f.
func JobYAML(job *batchv1.Job) ([]byte, error) {
	b, err := yaml.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("encode the Job: %w", err)
	}
	return b, nil
}

// ShardFromEnv resolves --shard job/N with the pod's completion index.
func ShardFromEnv(spec string, getenv func(string) string) (string, error) {
	rest, ok := strings.CutPrefix(spec, ShardFromJob+"/")
	if !ok {
		return spec, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	raw := getenv(EnvJobIndex)
	i, err := strconv.Atoi(raw)
	if err != nil || i < 0 {
		return "", fmt.Errorf("--shard %s: %s is %q, want the Indexed Job's 0-based completion index", spec, EnvJobIndex, raw)
	}
	return fmt.Sprintf("%d/%s", i+1, rest), nil
}
