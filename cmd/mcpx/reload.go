package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpx/mcpx/config"
)

// watchConfig reloads the config when its file changes or on SIGHUP, and
// applies it to the running aggregator. The returned func stops watching.
func (s *session) watchConfig(ctx context.Context) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	w, err := config.Watch(ctx, s.cfg, &config.WatchOptions{
		Load: s.load,
		// As open guarded the first config: otherwise the depth marker in
		// every child's env would look like a change, and a skipped self
		// entry like one to start.
		Adjust: func(next *config.Config) {
			self, _ := os.Executable()
			next.Warnings = append(next.Warnings, guardRecursion(next, currentDepth(os.LookupEnv), self)...)
		},
		OnReload: func(next *config.Config, ch config.Changes) {
			s.red.add(next.Secrets())     // before anything of next is logged
			s.keys.Store(&next.HTTP.Keys) // a removed key is refused from now on
			s.setOAuth(next.HTTP.OAuth)
			for _, warn := range next.Warnings {
				s.log.Warn(warn)
			}
			if ch.Empty() {
				s.log.Info("config reloaded: no server changed", "file", next.File)
			}
			s.agg.Reload(next, ch)
		},
		OnError: func(err error) {
			if errors.Is(err, config.ErrUnwatched) {
				s.log.Warn("cannot watch the config file", "err", s.red.Redact(err.Error()))
				return
			}
			s.log.Error("config reload failed; keeping the running config", "err", s.red.Redact(err.Error()))
		},
	})
	if err != nil {
		cancel()
		return nil, err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				s.log.Info("SIGHUP: reloading the config")
				w.Reload()
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
		<-w.Done()
	}, nil
}
