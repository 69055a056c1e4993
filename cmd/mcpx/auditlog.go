package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/audit"
)

// followPoll is how often `mcpx log --follow` looks for new lines.
const followPoll = 250 * time.Millisecond

type logOptions struct {
	json   bool
	follow bool
	server string
	since  time.Duration
}

func newLogCmd(ios *streams) *cobra.Command {
	o := &logOptions{}
	cmd := &cobra.Command{
		Use:   "log [--json] [--follow] [--server S] [--since 1h]",
		Short: "Show the audit trail: the calls that went through mcpx",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.since < 0 {
				return exitWith(ios, 2, fmt.Errorf("--since %s: want a positive duration such as 1h", o.since))
			}
			path := audit.DefaultPath()
			if path == "" {
				return exitWith(ios, 2, errors.New("no audit trail: neither XDG_STATE_HOME nor a home directory is set"))
			}
			return logRun(cmd.Context(), ios, path, o, time.Now())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print each line as JSON for scripts")
	f.BoolVar(&o.follow, "follow", false, "keep printing calls as they happen")
	f.StringVar(&o.server, "server", "", "only calls to this server")
	f.DurationVar(&o.since, "since", 0, "only calls in this last span (e.g. 30m, 1h)")
	return cmd
}

// logRun prints the trail at path, filtered by o, as of now.
func logRun(ctx context.Context, ios *streams, path string, o *logOptions, now time.Time) error {
	filter := audit.Filter{Server: o.server}
	if o.since > 0 {
		filter.Since = now.Add(-o.since)
	}
	header := []string{"TIME", "CLIENT", "SERVER", "CALL", "OUTCOME", "DURATION", "ARGS", "RESULT"}
	var rows [][]string
	emit := func(l audit.Line) error {
		if !filter.Match(l) {
			return nil
		}
		switch {
		case o.json:
			b, err := json.Marshal(l)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(ios.Out, "%s\n", b)
			return err
		case o.follow || !ios.OutTTY:
			// A row as it comes: a followed table cannot be aligned.
			return printTable(ios.Out, false, nil, [][]string{logRow(l)})
		}
		rows = append(rows, logRow(l))
		return nil
	}
	var err error
	if o.follow {
		err = audit.Follow(ctx, path, followPoll, emit)
	} else {
		err = audit.Read(path, emit)
	}
	if err != nil {
		return fmt.Errorf("audit trail: %w", err)
	}
	if rows == nil {
		return nil
	}
	return printTable(ios.Out, true, header, rows)
}

// logRow is one call as the table shows it; printTable makes each cell
// safe for a terminal (names and URIs come from servers and clients).
func logRow(l audit.Line) []string {
	call := l.Tool
	switch {
	case l.URI != "":
		call = l.URI
	case l.Prompt != "":
		call = "prompt " + l.Prompt
	}
	outcome := l.Outcome
	if l.ErrorCode != 0 {
		outcome += " " + strconv.Itoa(l.ErrorCode)
	}
	args := strconv.Itoa(l.ArgsBytes) + " B"
	if len(l.Arguments) > 0 {
		args = string(l.Arguments)
	} else if len(l.ArgKeys) > 0 {
		args = fmt.Sprint(l.ArgKeys)
	}
	dur := time.Duration(l.DurationMS * float64(time.Millisecond)).Round(time.Microsecond)
	return []string{l.Time.Local().Format(time.DateTime), l.Client, l.Server, call, outcome, dur.String(), args, size(l.ResultBytes)}
}
