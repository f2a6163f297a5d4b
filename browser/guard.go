package browser

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// guardEnv marks a process started as the guard of its parent.
const guardEnv = "CHROMEKEEPER_GUARD"

// RunGuardIfAsked turns the current process into a guard when it was started as
// one, and then exits; otherwise it returns at once. main and every TestMain
// that launches Chrome call it first.
//
// A guard outlives a server that was SIGKILLed: Pdeathsig takes Chrome down
// with the server, but nothing in a dead process can remove a profile
// directory. The server tells its guard, over the guard's stdin, which process
// groups and directories it owns; when that pipe closes (the server exited for
// whatever reason) the guard kills what is left and removes the directories.
func RunGuardIfAsked() {
	if os.Getenv(guardEnv) != "1" {
		return
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	runGuard(os.Stdin)
	os.Exit(0)
}

// runGuard reads commands until EOF, then kills every process group and
// removes every directory still owned. A group is dropped once it is dead
// (its id may be reused); a directory once it is removed (a relaunch may
// reuse it between).
//
//	group <pgid>   ungroup <pgid>   own "<dir>"   disown "<dir>"
func runGuard(commands io.Reader) {
	groups, dirs := map[int]bool{}, map[string]bool{}
	scanner := bufio.NewScanner(commands)
	for scanner.Scan() {
		verb, arg, _ := strings.Cut(scanner.Text(), " ")
		switch verb {
		case "group", "ungroup":
			if pgid, err := strconv.Atoi(arg); err == nil && pgid > 1 {
				groups[pgid] = verb == "group"
			}
		case "own", "disown":
			if dir, err := strconv.Unquote(arg); err == nil {
				dirs[dir] = verb == "own"
			}
		}
	}
	for pgid, live := range groups {
		if live {
			killGroup(pgid)
		}
	}
	for pgid, live := range groups {
		if live {
			awaitGroupGone(pgid, 2*time.Second)
		}
	}
	for dir, owned := range dirs {
		if owned {
			_ = os.RemoveAll(dir)
		}
	}
}

// guardian is the server's side of its guard, started with the first Chrome.
type guardian struct {
	mu      sync.Mutex
	started bool
	input   io.WriteCloser
	exited  chan struct{}
}

var processGuard guardian

func (g *guardian) group(pgid int)   { g.send(fmt.Sprintf("group %d\n", pgid)) }
func (g *guardian) ungroup(pgid int) { g.send(fmt.Sprintf("ungroup %d\n", pgid)) }
func (g *guardian) own(dir string)   { g.send("own " + strconv.Quote(dir) + "\n") }
func (g *guardian) disown(dir string) {
	g.send("disown " + strconv.Quote(dir) + "\n")
}

// send writes one command, starting the guard on first use. A guard that cannot
// be started or written to costs only the SIGKILL cleanup, so errors are dropped.
func (g *guardian) send(line string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.started {
		g.started = true
		g.input, g.exited = startGuard()
	}
	if g.input != nil {
		if _, err := io.WriteString(g.input, line); err != nil {
			g.input = nil
		}
	}
}

// StopGuard ends the guard of a server that is shutting down cleanly, after
// every browser has been closed, and waits briefly for it to exit so that it
// is not left a zombie.
func StopGuard() {
	g := &processGuard
	g.mu.Lock()
	input, exited := g.input, g.exited
	g.input = nil
	g.mu.Unlock()
	if input == nil {
		return
	}
	_ = input.Close()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
	}
}

func startGuard() (io.WriteCloser, chan struct{}) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), guardEnv+"=1")
	// Its own process group: a Ctrl-C meant for the server must not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	input, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil
	}
	if err := cmd.Start(); err != nil {
		return nil, nil
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return input, exited
}
