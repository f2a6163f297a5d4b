// Package tools defines chromekeeper's MCP tools: their names, parameters and
// schemas, argument checking, the security policy for URLs and files, and the
// text and structured answers. It runs every call through package session and
// knows nothing about processes.
//
// Answers follow one shape: optional "NOTICE:" lines, then "SUCCESS: <what>"
// and "Key: value" lines, or "ERROR: <CODE>: <message>" and detail lines; the
// same facts go in structuredContent. Failures a model can fix are tool results
// with isError, never protocol errors.
package tools
