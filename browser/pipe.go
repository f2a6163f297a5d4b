package browser

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
)

// pipeTransport carries CDP messages over Chrome's --remote-debugging-pipe:
// Chrome reads NUL-terminated JSON from its fd 3 and writes to its fd 4. A pipe
// needs no port, so nothing else on the machine can reach the browser.
//
// It implements rod's cdp.WebSocketable. Send and Read are safe for concurrent
// use; once Read has failed, Send fails too, so that no caller waits for an
// answer that can no longer arrive.
type pipeTransport struct {
	toChrome   *os.File
	fromChrome *os.File
	reader     *bufio.Reader

	writeMu sync.Mutex
	broken  atomic.Bool
}

func newPipeTransport(toChrome, fromChrome *os.File) *pipeTransport {
	return &pipeTransport{
		toChrome:   toChrome,
		fromChrome: fromChrome,
		reader:     bufio.NewReaderSize(fromChrome, 64<<10),
	}
}

// Send writes one message.
func (p *pipeTransport) Send(data []byte) error {
	if p.broken.Load() {
		return fmt.Errorf("send to chrome: %w", net.ErrClosed)
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	msg := make([]byte, len(data)+1)
	copy(msg, data)
	if _, err := p.toChrome.Write(msg); err != nil {
		p.broken.Store(true)
		return fmt.Errorf("send to chrome: %w", err)
	}
	return nil
}

// Read returns the next message, without its NUL terminator.
func (p *pipeTransport) Read() ([]byte, error) {
	msg, err := p.reader.ReadBytes(0)
	if err != nil {
		p.broken.Store(true)
		return nil, err
	}
	return msg[:len(msg)-1], nil
}

// Close closes both ends; a Read in progress returns an error.
func (p *pipeTransport) Close() {
	p.broken.Store(true)
	_ = p.toChrome.Close()
	_ = p.fromChrome.Close()
}
