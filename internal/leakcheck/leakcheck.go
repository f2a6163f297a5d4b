// Package leakcheck lets a test package that starts Chrome prove that it left
// no Chrome process and no profile directory behind.
//
// Run gives the test process (and every server and Chrome it starts, which
// inherit the environment) a private TMPDIR, runs the tests, and then fails the
// package if anything is left in that directory or any live process still
// names it on its command line.
package leakcheck

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// grace is how long cleanup that happens asynchronously (a guard after a
// server's SIGKILL, Chrome helpers exiting) may take.
const grace = 10 * time.Second

// Run runs m with a private TMPDIR, then the given shutdown functions (such as
// browser.StopGuard), then the leak check, and returns the exit code for os.Exit.
func Run(m *testing.M, shutdown ...func()) int {
	// Short: Chrome's singleton socket lives below, and socket paths are short.
	dir, err := os.MkdirTemp("", "ckt-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "leakcheck:", err)
		return 1
	}
	dir, _ = filepath.EvalSymlinks(dir)
	os.Setenv("TMPDIR", dir)
	becomeSubreaper()
	code := m.Run()
	for _, f := range shutdown {
		f()
	}
	if leaks := waitForLeaks(dir); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "leakcheck: the tests left behind:\n  %s\n", strings.Join(leaks, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	return code
}

// Processes returns the live processes whose command line mentions needle,
// as "pid cmdline" strings. Zombies have no command line and are not listed.
func Processes(needle string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(needle)) {
			continue
		}
		found = append(found, fmt.Sprintf("pid %d: %.200s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return found
}

func waitForLeaks(dir string) []string {
	deadline := time.Now().Add(grace)
	for {
		reapZombies()
		leaks := Processes(dir)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			leaks = append(leaks, "file "+filepath.Join(dir, e.Name()))
		}
		if len(leaks) == 0 || time.Now().After(deadline) {
			return leaks
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// becomeSubreaper makes orphans of the tests' servers (Chrome helpers, guards)
// children of the test process, so that reapZombies can collect them instead of
// leaving zombies to an init that may never reap.
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// reapZombies waits for every zombie child of this process; live children
// (servers still being waited for by os/exec) are left alone.
func reapZombies() {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Format: pid (comm) state ppid …; comm may contain spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[0] != "Z" || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		var status syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &status, syscall.WNOHANG, nil)
	}
}
