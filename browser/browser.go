package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// ProbeTimeout bounds a health probe: a browser that cannot answer
// Browser.getVersion within it is taken for hung.
const ProbeTimeout = 3 * time.Second

// ErrUnresponsive reports a browser whose process lives but does not answer.
var ErrUnresponsive = errors.New("chrome is not answering")

// Browser is one running Chrome and its CDP connection. Whoever obtained it
// from a Starter owns it and must call Close (or Kill, to keep the profile for
// a relaunch). Its methods are safe for concurrent use.
type Browser struct {
	Conn    *Conn
	Profile *Profile // nil for a browser this process did not launch
	Version string   // for example "Chrome/156.0.8078.79"
	Started time.Time

	proc      *process
	done      chan struct{}
	closeOnce sync.Once
}

func newBrowser(conn *Conn, proc *process, profile *Profile) *Browser {
	b := &Browser{
		Conn:    conn,
		Profile: profile,
		Started: time.Now(),
		proc:    proc,
		done:    make(chan struct{}),
	}
	var exited <-chan struct{}
	if proc != nil {
		exited = proc.exited
	}
	go func() {
		select {
		case <-conn.Done():
		case <-exited:
		}
		close(b.done)
	}()
	return b
}

// PID is the main Chrome process id, or 0 for a browser this process did not launch.
func (b *Browser) PID() int {
	if b.proc == nil {
		return 0
	}
	return b.proc.pid()
}

// Attached reports whether this is a browser the user runs, which
// chromekeeper attached to rather than launched: closing it only detaches.
func (b *Browser) Attached() bool { return b.proc == nil }

// Done is closed when the browser has gone: its process exited or its
// connection ended.
func (b *Browser) Done() <-chan struct{} { return b.done }

// Gone reports whether Done is closed.
func (b *Browser) Gone() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// Probe checks that the browser answers a trivial command within ProbeTimeout.
// Only a probe tells a hung (for example SIGSTOPped) browser from a live one:
// its process and socket both look fine.
func (b *Browser) Probe(ctx context.Context) error {
	if b.Gone() {
		return ErrConnectionLost
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	_, err := proto.BrowserGetVersion{}.Call(b.Conn.Session(ctx, ""))
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w within %s", ErrUnresponsive, ProbeTimeout)
	}
	return err
}

// Kill ends the browser at once and reaps its processes, keeping the profile so
// that a relaunch can reuse it.
func (b *Browser) Kill() {
	b.closeOnce.Do(func() {
		if b.proc != nil {
			b.proc.kill()
			processGuard.ungroup(b.proc.pid())
		}
		b.Conn.Close()
	})
}

// Close kills the browser and removes its profile.
func (b *Browser) Close() error {
	b.Kill()
	if b.Profile == nil {
		return nil
	}
	return b.Profile.Remove()
}
