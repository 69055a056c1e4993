package upstream

import "github.com/mcpx/mcpx/callopt"

// CallOptions are what one request carries beside its params (see
// [callopt.Options]).
type CallOptions = callopt.Options

// optionsOf is *o, or the zero value for nil.
func optionsOf(o *CallOptions) CallOptions {
	if o == nil {
		return CallOptions{}
	}
	return *o
}
