package aggregator

import (
	"context"
	"encoding/json"
)

// ReadResource reads a resource by URI (a template's match too) from the
// source that serves it and returns the raw ReadResourceResult.
func (a *Aggregator) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	params, err := json.Marshal(map[string]string{"uri": uri})
	if err != nil {
		return nil, err
	}
	return a.readResource(ctx, nil, params)
}

// GetPrompt gets a prompt by exposed name with its arguments (nil for
// none) and returns the raw GetPromptResult.
func (a *Aggregator) GetPrompt(ctx context.Context, name string, args map[string]string) (json.RawMessage, error) {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	params, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return a.getPrompt(ctx, nil, params)
}
