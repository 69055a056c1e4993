// Package principal carries who a request comes from through its
// context: the name of the API key serve --http let it in with. The
// transport that checks credentials sets it; the audit trail and the
// spans read it, wherever the request travels.
package principal

import "context"

type key struct{}

// With returns ctx carrying name ("": ctx as it is).
func With(ctx context.Context, name string) context.Context {
	if name == "" {
		return ctx
	}
	return context.WithValue(ctx, key{}, name)
}

// Of is the principal ctx carries; "" for none (stdio, the terminal,
// the shared token).
func Of(ctx context.Context) string {
	p, _ := ctx.Value(key{}).(string)
	return p
}

type profileKey struct{}

// WithProfile returns ctx limited to profile ("": ctx as it is): the
// only part of the catalog its principal may see, where a request's path
// does not say (the terminal API).
func WithProfile(ctx context.Context, profile string) context.Context {
	if profile == "" {
		return ctx
	}
	return context.WithValue(ctx, profileKey{}, profile)
}

// ProfileOf is the profile ctx is limited to; "" for none.
func ProfileOf(ctx context.Context) string {
	p, _ := ctx.Value(profileKey{}).(string)
	return p
}
