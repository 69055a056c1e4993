package main

import (
	"net/http"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/termapi"
)

// apiHandler is the terminal API serve --http serves at /mcpx/v1/.
func (s *session) apiHandler() (http.Handler, error) {
	return termapi.New(&termapi.Options{
		View: func(profile string) termapi.Catalog {
			if v := s.view(profile); v != nil {
				return v
			}
			return nil
		},
		MaxBody: s.cfg.MaxMessageBytes,
		Redact:  s.red.Redact,
	})
}

// view is the catalog shown to a request limited to profile: the whole
// one for "", else the profile's view; nil when there is no such
// profile.
func (s *session) view(profile string) *aggregator.Aggregator {
	if profile == "" {
		return s.agg
	}
	return s.agg.ProfileView(profile)
}
