package aggregator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
)

// outbox is the single writer of a stdio server: messages leave in the
// order they were queued, each whole on its own line. Queuing blocks when
// the client reads slowly, so nothing is dropped; it gives up only when the
// server is shutting down.
type outbox struct {
	ctx  context.Context
	w    io.Writer
	q    chan []byte
	stop chan struct{} // closed by close: drain q, flush, end
	done chan struct{}
}

func newOutbox(ctx context.Context, w io.Writer) *outbox {
	return &outbox{ctx: ctx, w: w, q: make(chan []byte, 256), stop: make(chan struct{}), done: make(chan struct{})}
}

// run writes until close; a failed write ends the server through cancel.
func (o *outbox) run(cancel context.CancelCauseFunc) {
	defer close(o.done)
	bw := bufio.NewWriterSize(o.w, 64<<10)
	write := func(msg []byte) error {
		bw.Write(msg)
		bw.WriteByte('\n')
		// Flush when nothing else is waiting, so bursts share a syscall.
		if len(o.q) == 0 {
			return bw.Flush()
		}
		return nil
	}
	for {
		select {
		case msg := <-o.q:
			if err := write(msg); err != nil {
				cancel(err)
				return
			}
		case <-o.stop:
			for {
				select {
				case msg := <-o.q:
					if write(msg) != nil {
						return
					}
				default:
					bw.Flush()
					return
				}
			}
		}
	}
}

// close writes what is queued and stops the writer; later messages are
// discarded.
func (o *outbox) close() {
	close(o.stop)
	<-o.done
}

// raw queues one complete JSON-RPC message. A message with a newline
// inside (an upstream over HTTP may pretty-print) is compacted first: on
// stdio a newline ends the message.
func (o *outbox) raw(msg []byte) {
	if bytes.IndexByte(msg, '\n') >= 0 {
		var b bytes.Buffer
		if json.Compact(&b, msg) == nil {
			msg = b.Bytes()
		} else {
			// Not JSON (a source's bug): still never split the line.
			msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(" "))
		}
	}
	select {
	case o.q <- msg:
	case <-o.ctx.Done():
	case <-o.done:
	}
}

func (o *outbox) result(id json.RawMessage, result json.RawMessage) {
	msg := make([]byte, 0, len(result)+len(id)+40)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = append(msg, id...)
	msg = append(msg, `,"result":`...)
	msg = append(msg, result...)
	msg = append(msg, '}')
	o.raw(msg)
}

func (o *outbox) error(id json.RawMessage, code int, message string, data json.RawMessage) {
	e := struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{code, message, data}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	o.raw(b)
}
