// Package session turns a conversation into a browser without any session
// management by the model: the first call that needs a page starts Chrome,
// later calls reuse it, IdleTimeout without calls closes it, and a crash or
// hang is healed inside the next call, on the same profile, with the current
// page restored and a NOTICE saying what happened.
//
// It also owns the pages of a conversation (short ids p1, p2…, a current
// page) and the page operations the tools expose: navigate, reload,
// evaluate, screenshot.
package session
