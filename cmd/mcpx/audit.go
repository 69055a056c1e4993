package main

import (
	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/config"
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
