package main

import (
	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/trust"
)

// openAudit starts the audit trail the config asks for: nil when it is
// off or there is no place for it, which is logged and never stops a
// command.
func openAudit(cfg *config.Config, logger *log.Logger) *audit.Recorder {
	if cfg.Audit.Disabled {
		return nil
	}
	path := audit.DefaultPath()
	if path == "" {
		logger.Warn("audit trail is off: no home or XDG_STATE_HOME directory")
		return nil
	}
	rec, err := audit.New(&audit.Options{Path: path, MaxBytes: cfg.Audit.MaxBytes,
		Arguments: audit.Arguments(cfg.Audit.Arguments), Logger: slogger(logger.WithPrefix("audit"))})
	if err != nil {
		logger.Warn("audit trail is off", "err", err)
		return nil
	}
	return rec
}

// openPins opens the trust pins in the state directory, unless the
// config pins nothing. No state
// directory (no home) pins nothing, which is logged; a pin file that
// cannot be read stops the command: guessing would trust what the user
// has not approved. With background (serve) the file is read while the
// command starts, and serve stops when it proves unreadable.
func openPins(cfg *config.Config, logger *log.Logger, background bool) (*trust.Store, error) {
	pinned := cfg.TrustOf(config.Server{}) != config.TrustOff
	for _, s := range cfg.Servers {
		pinned = pinned || cfg.TrustOf(s) != config.TrustOff
	}
	if !pinned {
		return nil, nil
	}
	dir := trust.DefaultDir()
	if dir == "" {
		logger.Warn("tool pinning is off: no home or XDG_STATE_HOME directory")
		return nil, nil
	}
	return trust.Open(dir, &trust.Options{Logger: slogger(logger.WithPrefix("trust")), Background: background})
}
