// Package audit keeps the audit trail: one JSON line per tools/call,
// resources/read and prompts/get that passes through mcpx, appended to
// $XDG_STATE_HOME/mcpx/audit.jsonl.
//
// A [Recorder] never holds a call back: [Recorder.Record] hands the call to
// a bounded queue, written out in one append shortly after its first call.
// When the queue is full or the file cannot be written, lines are dropped
// and that is logged once. Until a call is recorded it opens no file and
// runs nothing.
//
//	rec, err := audit.New(&audit.Options{Path: audit.DefaultPath(), Logger: logger})
//	if err != nil { ... }
//	defer rec.Close()
//	start := time.Now()
//	res, err := send(params)
//	rec.Record(audit.Call{Start: start, Server: "files", Method: "tools/call", Params: params, Result: res, Err: err})
//
// A nil *Recorder records nothing, so that `audit: false` costs nothing.
package audit
