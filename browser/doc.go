// Package browser obtains one Chrome and speaks the DevTools protocol to it.
//
// It finds a system Chrome (never downloading one), launches it headless with a
// private profile in its own process group, connects over a pipe, probes its
// health and closes it without leaving a process or a directory behind. It knows
// nothing about MCP, conversations or pages: that is package session.
//
// The layering follows go-rod: the wire is rod's lib/cdp client, the typed
// protocol is rod's lib/proto; this package adds the process, the pipe transport
// and one event dispatcher per browser.
package browser
