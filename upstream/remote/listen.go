package remote

import (
	"errors"
	"io"
	"net/http"
)

// listenLoop keeps the GET stream open until the transport ends: what
// the server sends on it is delivered like the rest. A server without a
// stream (405) is left alone; one whose session is gone (404) ends the
// connection; any other failure is tried again, paced by the stream
// client (see Options.StreamClient) and at least by retryPause.
func (t *Streamable) listenLoop() {
	defer t.wg.Done()
	log := t.opts.logger()
	lastID := ""
	for t.life.Err() == nil {
		err := t.listenOnce(&lastID)
		switch {
		case t.life.Err() != nil:
			return
		case errors.Is(err, errNoStream):
			log.Debug("the server has no GET stream")
			return
		case errors.Is(err, ErrSessionEnded):
			return
		case err != nil:
			log.Debug("GET stream ended", "err", err)
		}
		if sleep(t.life, retryPause) != nil {
			return
		}
	}
}

var errNoStream = errors.New("no GET stream (405)")

// listenOnce opens the GET stream once and delivers what comes on it. A
// stream opened again asks, with Last-Event-ID, for what the server sent
// after the last event read, so that nothing is lost in between.
func (t *Streamable) listenOnce(lastID *string) error {
	h := t.header()
	req, err := newRequest(t.life, http.MethodGet, t.url, nil, h)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if *lastID != "" {
		req.Header.Set("Last-Event-ID", *lastID)
	}
	resp, err := t.opts.streamClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		drain(resp)
		return errNoStream
	case resp.StatusCode == http.StatusNotFound && h[headerSession] != "":
		drain(resp)
		t.end(ErrSessionEnded)
		return ErrSessionEnded
	case resp.StatusCode != http.StatusOK:
		return statusError("GET stream", resp)
	case mediaType(resp) != "text/event-stream":
		drain(resp)
		return errors.New("the GET stream is not an event stream: " + resp.Header.Get("Content-Type"))
	}
	er := newEventReader(resp.Body)
	defer func() {
		if er.lastID != "" {
			*lastID = er.lastID
		}
	}()
	for {
		ev, err := er.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if ev.name == "message" {
			t.in.deliver(t.life, ev.data)
		}
	}
}
