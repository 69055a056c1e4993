package remote

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"time"
)

// event is one server-sent event.
type event struct {
	name string // "message" when the stream did not say
	data []byte
	id   string
}

// eventReader reads server-sent events (the text/event-stream format of
// the HTML standard) from a stream. The length of a line is bounded by
// the stream under it (see upstream's limitBodies), not here.
type eventReader struct {
	r *bufio.Reader
	// lastID is the stream's last event ID, which a client resuming it
	// sends as Last-Event-ID; it is set by events without data too.
	lastID string
	// retry is the reconnection time the stream asked for; 0 when it did
	// not.
	retry time.Duration
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// next returns the next event that carries data; comments, retry hints
// and events without data (a server's priming event) are skipped. It
// returns io.EOF when the stream ends, an event cut off by the end
// included.
func (er *eventReader) next() (event, error) {
	var ev event
	var data []byte
	hasData := false
	for {
		line, err := er.r.ReadBytes('\n')
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return event{}, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte{'\n'}), []byte{'\r'})
		if len(line) == 0 {
			if ev.id != "" {
				er.lastID = ev.id
			}
			if hasData && len(data) > 0 {
				ev.data = data
				if ev.name == "" {
					ev.name = "message"
				}
				return ev, nil
			}
			ev, data, hasData = event{}, nil, false
			continue
		}
		if line[0] == ':' {
			continue // a comment, often a keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				er.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}
