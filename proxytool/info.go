package proxytool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// info answers action info: one embedded resource holding one capability
// object.
func (p *Proxy) info(req request) json.RawMessage {
	it, err := p.resolve(req.kind, req.path)
	if errors.Is(err, ErrNotFound) {
		return errorResult(fmt.Sprintf("%s '%s' not found", kindTitle(req.kind), req.path) + p.hint(req.kind, req.path) + p.suggest(req.kind, req.path))
	}
	if err != nil {
		return errorResult(err.Error())
	}
	typ := kindTitle(req.kind)
	if it.Template {
		typ = "ResourceTemplate"
	}
	js := it.JSON
	if len(js) == 0 {
		js = json.RawMessage("null")
	}
	return embedded(embeddedResource{
		URI:  "proxy:info/" + string(req.kind) + "/" + req.path,
		Text: string(js),
	}, map[string]any{
		"pythonType":  typ,
		"objectType":  typ,
		"many":        false,
		"isArray":     false,
		"proxyAction": "info",
		"proxyType":   req.kind,
		"proxyPath":   req.path,
	})
}

// embeddedResource is the resource of a list, info or prompt result.
type embeddedResource struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// embedded is a CallToolResult holding one embedded JSON resource with
// annotations.
func embedded(r embeddedResource, annotations map[string]any) json.RawMessage {
	r.MimeType = "application/json"
	type content struct {
		Type        string           `json:"type"`
		Resource    embeddedResource `json:"resource"`
		Annotations map[string]any   `json:"annotations"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// Nothing here can fail to encode: strings, bools and a Kind.
	_ = enc.Encode(struct {
		Content []content `json:"content"`
	}{[]content{{Type: "resource", Resource: r, Annotations: annotations}}})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
