package browser

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// process is one Chrome main process, leader of its own process group.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the main process has been waited for
}

// startProcess starts cmd in its own process group with Pdeathsig, so that
// Chrome dies with the server even on SIGKILL. Pdeathsig fires when the thread
// that forked the child exits, so the fork happens on a goroutine locked to its
// thread for the child's whole life; the goroutine ends (and the thread with it)
// only after the child has been waited for.
func startProcess(cmd *exec.Cmd) (*process, error) {
	becomeSubreaper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread goes away with this goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// kill kills the whole process group and reaps it: the main process and the
// helpers (zygote, renderers, GPU and network services) that reparent to this
// server once their parent is gone.
func (p *process) kill() {
	killGroup(p.pid())
	<-p.exited
	awaitGroupGone(p.pid(), 2*time.Second)
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// awaitGroupGone reaps the group's zombies that are this process's children and
// waits until no member of the group is left, or the timeout passes.
func awaitGroupGone(pgid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		var status syscall.WaitStatus
		for {
			pid, err := syscall.Wait4(-pgid, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var subreaperOnce sync.Once

// becomeSubreaper makes orphaned descendants (Chrome's helpers, once the main
// process is gone) children of this server instead of init, so that they can be
// reaped here; some container inits never reap orphans and leave zombies.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}
