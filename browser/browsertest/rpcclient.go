package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"

	"github.com/coder/websocket"
)

// rpcClient is a bare JSON-RPC peer on one WebSocket: it queues every
// message it reads, and callers take the ones they want out of the queue.
// StartChromium uses it to watch for the extension as an MCP client would;
// the tests drive the relay with it.
type rpcClient struct {
	c      *websocket.Conn
	ctx    context.Context // the socket's life
	cancel context.CancelFunc
	wmu    sync.Mutex

	mu      sync.Mutex
	queue   []queued
	arrived chan struct{} // closed and replaced when a message arrives
	done    chan struct{} // closed when the reader ends
	err     error         // why the reader ended; read after done
	nextID  int
}

// queued is a message read, decoded once.
type queued struct {
	data json.RawMessage
	m    message
	ok   bool // it decoded
}

func dialRPC(ctx context.Context, url string) (*rpcClient, error) {
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	c.SetReadLimit(readLimit)
	rc := &rpcClient{c: c, arrived: make(chan struct{}), done: make(chan struct{})}
	rc.ctx, rc.cancel = context.WithCancel(context.Background())
	go rc.readLoop()
	return rc, nil
}

func (rc *rpcClient) readLoop() {
	defer close(rc.done)
	defer rc.cancel()
	for {
		_, data, err := rc.c.Read(rc.ctx)
		if err != nil {
			rc.err = err
			return
		}
		q := queued{data: data}
		q.ok = json.Unmarshal(data, &q.m) == nil
		rc.mu.Lock()
		rc.queue = append(rc.queue, q)
		close(rc.arrived)
		rc.arrived = make(chan struct{})
		rc.mu.Unlock()
	}
}

// close closes the socket and waits for the reader.
func (rc *rpcClient) close() {
	_ = rc.c.Close(websocket.StatusNormalClosure, "")
	<-rc.done
}

// send writes v as one text message; a string or []byte goes as is.
func (rc *rpcClient) send(v any) error {
	var data []byte
	switch v := v.(type) {
	case string:
		data = []byte(v)
	case []byte:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			return err
		}
	}
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	ctx, cancel := context.WithTimeout(rc.ctx, rpcwire.WriteTimeout)
	defer cancel()
	return rc.c.Write(ctx, websocket.MessageText, data)
}

// await takes the first queued message that match accepts, waiting for
// one to arrive if need be.
func (rc *rpcClient) await(ctx context.Context, match func(message) bool) (json.RawMessage, error) {
	for {
		data, ch := rc.take(match)
		if data != nil {
			return data, nil
		}
		select {
		case <-ch:
		case <-rc.done: // everything read is queued by now
			if data, _ := rc.take(match); data != nil {
				return data, nil
			}
			return nil, fmt.Errorf("socket closed: %w", rc.err)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// take removes and returns the first queued match, or returns the channel
// that the next arrival closes.
func (rc *rpcClient) take(match func(message) bool) (json.RawMessage, chan struct{}) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, q := range rc.queue {
		if q.ok && match(q.m) {
			rc.queue = append(rc.queue[:i:i], rc.queue[i+1:]...)
			return q.data, nil
		}
	}
	return nil, rc.arrived
}

// call sends a request with the next numeric id and waits for its
// response. It returns the result, or the error member as raw JSON.
func (rc *rpcClient) call(ctx context.Context, method string, params any) (result, rpcErr json.RawMessage, err error) {
	rc.mu.Lock()
	rc.nextID++
	id := rc.nextID
	rc.mu.Unlock()
	return rc.callID(ctx, id, method, params)
}

// callID is call with a chosen id (a number or a string).
func (rc *rpcClient) callID(ctx context.Context, id any, method string, params any) (result, rpcErr json.RawMessage, err error) {
	if params == nil {
		params = map[string]any{}
	}
	rawID, _ := json.Marshal(id)
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	if err := rc.send(req); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	data, err := rc.await(ctx, func(m message) bool {
		return m.Method == "" && string(m.ID) == string(rawID)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	var m message
	_ = json.Unmarshal(data, &m)
	return m.Result, m.Error, nil
}
