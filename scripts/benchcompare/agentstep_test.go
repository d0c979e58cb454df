package main

import (
	"reflect"
	"testing"
)

func TestBenchMetrics(t *testing.T) {
	t.Parallel()
	out := []byte(`goos: linux
BenchmarkStepPerProfile/qwen2.5-vl-7b-instruct-2         	       2	6192939922 ns/op	        61.08 ms/key-median	       114.6 ms/key-p95	        38.77 ms/observe-median	       116.9 ms/observe-p95
BenchmarkStepPerProfile/gpt-2   2	7512509092 ns/op	64.70 ms/key-median
BenchmarkOther-2   2	1 ns/op
BenchmarkWatchedStep-2   	       4	5862061704 ns/op	        66.54 MB/headless-rss	        1.302 watched/headless
PASS
`)
	got := benchMetrics(out, "BenchmarkStepPerProfile/")
	want := map[string]map[string]float64{
		"qwen2.5-vl-7b-instruct": {"ns/op": 6192939922, "ms/key-median": 61.08, "ms/key-p95": 114.6, "ms/observe-median": 38.77, "ms/observe-p95": 116.9},
		"gpt":                    {"ns/op": 7512509092, "ms/key-median": 64.70},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("benchMetrics = %v, want %v", got, want)
	}
	// A benchmark without sub-benchmarks is named "" after its prefix.
	got = benchMetrics(out, "BenchmarkWatchedStep")
	want = map[string]map[string]float64{"": {"ns/op": 5862061704, "MB/headless-rss": 66.54, "watched/headless": 1.302}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("benchMetrics of one benchmark = %v, want %v", got, want)
	}
}
