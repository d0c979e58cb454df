package proc

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Thread is what /proc says of one thread: where a frozen program waits.
type Thread struct {
	PID, TID int
	// Name is the thread's comm ("mousepad", "gdbus", "pool-0").
	Name string
	// State is the one-letter scheduler state: R running, S sleeping, D
	// waiting on the disk, T stopped, Z zombie.
	State string
	// WChan is the kernel function the thread sleeps in ("futex_wait_queue",
	// "do_poll"), or "" when it runs or the kernel does not say.
	WChan string
}

// Threads lists the threads of pid and of every process below it, from
// /proc/PID/task: their names, states and the kernel functions they wait
// in. A process that ends while it is read is left out.
func Threads(pid int) []Thread {
	var out []Thread
	for _, p := range Descendants(pid) {
		dir := filepath.Join("/proc", strconv.Itoa(p), "task")
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		var threads []Thread
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			t, ok := readThread(filepath.Join(dir, task.Name()))
			if !ok {
				continue
			}
			t.PID, t.TID = p, tid
			threads = append(threads, t)
		}
		// The directory lists thread ids as names, "10" before "9".
		slices.SortFunc(threads, func(a, b Thread) int { return a.TID - b.TID })
		out = append(out, threads...)
	}
	return out
}

// readThread reads a task directory's stat and wchan.
func readThread(dir string) (Thread, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Thread{}, false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return Thread{}, false
	}
	fields := strings.Fields(s[closing+1:])
	if len(fields) == 0 {
		return Thread{}, false
	}
	t := Thread{Name: s[open+1 : closing], State: fields[0]}
	if w, err := os.ReadFile(filepath.Join(dir, "wchan")); err == nil {
		// "0" is a running thread's, or a kernel's that hides it.
		if wchan := strings.TrimSpace(string(w)); wchan != "0" {
			t.WChan = wchan
		}
	}
	return t, true
}
