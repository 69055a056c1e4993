package core

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// listenFilter is the notifications field of subscriptions/listen.
type listenFilter struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
}

// wants reports whether the filter asked for a notification.
func (f *listenFilter) wants(method string, params json.RawMessage) bool {
	switch method {
	case "notifications/tools/list_changed":
		return f.Tools
	case "notifications/prompts/list_changed":
		return f.Prompts
	case "notifications/resources/list_changed":
		return f.Resources
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		return json.Unmarshal(params, &p) == nil && slices.Contains(f.URIs, p.URI)
	}
	return false
}

// listen serves subscriptions/listen: the acknowledgement, then the
// catalog's changes the client asked for, each tagged with the request's
// id, until ctx is done (the client cancelled or went away).
func (s *Server) listen(ctx context.Context, req *Request, notify func([]byte)) *Error {
	var p struct {
		Notifications *listenFilter `json:"notifications"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Notifications == nil {
		return jsonrpc.Errorf(CodeInvalidParams, "invalid params: subscriptions/listen needs a notifications object (toolsListChanged, promptsListChanged, resourcesListChanged, resourceSubscriptions)")
	}
	f := p.Notifications
	tag := append(append([]byte(`{"`+metaSubscriptionID+`":`), req.ID...), '}')
	ack, _ := json.Marshal(map[string]any{"notifications": f})
	ack, _ = rawjson.Set(ack, "_meta", tag)
	notify(notification("notifications/subscriptions/acknowledged", ack))
	s.cat.Watch(ctx, f.URIs, func(method string, params json.RawMessage) {
		if !f.wants(method, params) {
			return
		}
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage("{}")
		}
		tagged, err := rawjson.Set(params, "_meta", tag)
		if err != nil {
			return
		}
		notify(notification(method, tagged))
	})
	<-ctx.Done()
	return nil
}
