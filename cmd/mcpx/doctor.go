package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/httpserve/accesstoken"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/hidden"
	"github.com/mcpx/mcpx/scan"
	"github.com/mcpx/mcpx/upstream"
)

type doctorOptions struct{ json bool }

func newDoctorCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the config and every server, and say what a client would stumble on",
		Long: `Load the config, start every server once, and report for each: config
problems, whether its command is on PATH, how long it took to connect, what
it offers, tool names a client would reject (and what mcpx serves instead),
input schemas that are not valid JSON Schema, and names two servers share.
Then the size of tools/list as a client receives it, in bytes and
estimated tokens. With --profile, only that profile's servers and
tools. Exits 1 when anything is an error, 2 when the config does not
load or the profile is unknown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(g.loadOptions())
			if err != nil {
				fmt.Fprintf(ios.Out, "config: %s\nverdict: the config does not load: fix it first\n", err)
				return exitError{2}
			}
			s, err := openFor(cmd.Context(), ios, g, profileServers(cfg.Profile))
			if err != nil {
				return err
			}
			s.summarize = false
			defer s.close()
			rep := diagnose(cmd.Context(), s.cfg, s.agg)
			if err := rep.print(ios.Out, o.json); err != nil {
				return err
			}
			if rep.Errors > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the findings as JSON")
	return cmd
}

// profileServers names the servers of profile p for openFor: with no
// profile, or one of every server, all of them.
func profileServers(p *config.Profile) owners {
	if p == nil || len(p.Servers) == 0 {
		return nil
	}
	return func(*aggregator.Aggregator) ([]string, bool) { return p.Servers, true }
}

// finding is one thing doctor noticed.
type finding struct {
	Server  string `json:"server,omitempty"`
	Level   string `json:"level"` // error, warning, ok
	Message string `json:"message"`
}

// serverReport is one server in doctor's report.
type serverReport struct {
	Name          string `json:"name"`
	State         string `json:"state"`
	Transport     string `json:"transport"`
	ConnectMillis int64  `json:"connectMs,omitempty"`
	Tools         int    `json:"tools"`
	Resources     int    `json:"resources"`
	Prompts       int    `json:"prompts"`
	// Hidden is how many characters of hidden text mcpx removed from what
	// the server lists.
	Hidden int `json:"hiddenCharacters,omitempty"`
	// Withheld counts the tools and prompts changed or added since the
	// user approved the server's.
	Withheld int       `json:"withheld"`
	Findings []finding `json:"findings"`
}

type doctorReport struct {
	File string `json:"file"`
	// Profile is the profile checked (--profile, MCPX_PROFILE); "" for
	// the whole config.
	Profile  string         `json:"profile,omitempty"`
	Expose   string         `json:"expose"`
	Config   []finding      `json:"config"`
	Servers  []serverReport `json:"servers"`
	Catalog  []finding      `json:"catalog"`
	Bytes    int            `json:"toolsListBytes"`
	Tokens   int            `json:"toolsListTokens"`
	Errors   int            `json:"errors"`
	Warnings int            `json:"warnings"`
	Verdict  string         `json:"verdict"`
}

// estimateTokens estimates what text costs a model: about one token per
// four bytes, the usual rate for English and JSON with common tokenizers.
// It is an estimate, not any one model's count.
func estimateTokens(n int) int { return int(aggregator.EstimateTokens(n)) }

// diagnose checks the config and what the aggregator found.
func diagnose(ctx context.Context, cfg *config.Config, agg *aggregator.Aggregator) *doctorReport {
	rep := &doctorReport{File: cfg.File, Expose: string(cfg.Expose)}
	if cfg.Profile != nil {
		rep.Profile = cfg.Profile.Name
	}
	if cfg.File == "" {
		rep.Config = append(rep.Config, finding{Level: "warning", Message: "no config file found: the catalog is empty"})
	}
	if o := cfg.HTTP.OAuth; o != nil {
		rep.Config = append(rep.Config, oauthFinding(ctx, *o))
	}
	perServer := map[string][]finding{}
	for _, w := range cfg.Warnings {
		f := finding{Level: "warning", Message: w}
		placed := false
		for _, s := range cfg.Servers {
			if strings.Contains(w, "servers."+s.Name+".") || strings.HasSuffix(w, "servers."+s.Name) {
				perServer[s.Name] = append(perServer[s.Name], f)
				placed = true
				break
			}
		}
		if !placed {
			rep.Config = append(rep.Config, f)
		}
	}

	cat := agg.Catalog()
	exposed := map[[2]string]string{} // server, original -> exposed name
	for _, e := range cat.Tools {
		exposed[[2]string{e.Server, e.Original}] = e.Name
	}
	clients := agg.Clients()
	for i, s := range cfg.Servers {
		if cfg.Profile != nil && !cfg.Profile.Includes(s.Name) {
			continue // the profile leaves it out: not checked, not started
		}
		st := clients[i].Status()
		r := serverReport{Name: s.Name, State: string(st.State), Transport: string(s.Transport),
			Tools: st.Tools, Resources: st.Resources + st.ResourceTemplates, Prompts: st.Prompts,
			Findings: perServer[s.Name]}
		add := func(level, format string, args ...any) {
			r.Findings = append(r.Findings, finding{Level: level, Message: fmt.Sprintf(format, args...)})
		}
		if !s.Enabled {
			add("ok", "disabled")
			rep.Servers = append(rep.Servers, r)
			continue
		}
		commandMissing := s.Transport == config.TransportStdio && !checkCommand(s, add)
		switch st.State {
		case upstream.StateConnected:
			r.ConnectMillis = st.ConnectTime.Milliseconds()
			add("ok", "connected in %s: %d tools, %d resources, %d prompts", st.ConnectTime.Round(time.Millisecond),
				r.Tools, r.Resources, r.Prompts)
		case upstream.StateSleeping:
			add("ok", "lazy and sleeping: checked from its remembered catalog")
		case upstream.StateFailed:
			if !commandMissing {
				add("error", "does not start: %s", st.Err)
			}
		default:
			add("error", "still %s after its timeout (%s)", st.State, s.Timeout)
		}
		for _, raw := range clients[i].Tools() {
			checkTool(s.Name, raw, exposed, add)
		}
		for _, f := range scan.Text("instructions", clients[i].Instructions(), scan.Context{Others: cat.ToolNames(), Server: s.Name}) {
			add("warning", "its instructions to the model: %s", f)
		}
		warnings, errors := flagDescriptions(cat, s.Name)
		for _, f := range warnings {
			add("warning", "%s", f)
		}
		for _, f := range errors {
			add("error", "%s", f)
		}
		if n := cat.Withheld()[s.Name]; n > 0 {
			r.Withheld = n
			add("warning", "%d tools or prompts withheld: changed or added since approved; `mcpx trust %s` shows and approves them", n, s.Name)
		}
		if n := cat.Hidden[s.Name]; n > 0 {
			r.Hidden = n
			add("warning", "%d characters of hidden text (Unicode tags, zero-width or bidi controls, private-use characters, terminal escapes) removed from its titles and descriptions%s", n, hiddenIn(clients[i].Tools()))
		}
		rep.Servers = append(rep.Servers, r)
	}

	for _, col := range cat.Collisions {
		rep.Catalog = append(rep.Catalog, finding{Server: col.Dropped, Level: "warning", Message: "duplicate name: " + col.String()})
	}
	for _, p := range cat.Problems {
		rep.Catalog = append(rep.Catalog, finding{Level: "warning", Message: p})
	}
	list := agg.ListResult("tools/list")
	rep.Bytes = len(list) + len(`{"jsonrpc":"2.0","id":1,"result":}`)
	rep.Tokens = estimateTokens(rep.Bytes)

	for _, fs := range append([][]finding{rep.Config, rep.Catalog}, serverFindings(rep.Servers)...) {
		for _, f := range fs {
			switch f.Level {
			case "error":
				rep.Errors++
			case "warning":
				rep.Warnings++
			}
		}
	}
	switch {
	case rep.Errors > 0:
		rep.Verdict = fmt.Sprintf("%d error(s), %d warning(s): fix the errors", rep.Errors, rep.Warnings)
	case rep.Warnings > 0:
		rep.Verdict = fmt.Sprintf("usable, with %d warning(s)", rep.Warnings)
	default:
		rep.Verdict = "all good"
	}
	return rep
}

// oauthFinding says whether serve --http can check access tokens: the
// issuer's keys are fetched as the first token would fetch them.
func oauthFinding(ctx context.Context, o config.OAuth) finding {
	n, from, err := accesstoken.New(o, nil).Probe(ctx)
	if err != nil {
		return finding{Level: "error", Message: fmt.Sprintf("http.oauth: %v: serve --http would refuse every access token", err)}
	}
	return finding{Level: "ok", Message: fmt.Sprintf("http.oauth: the issuer %s publishes %d signing keys (%s)", o.Issuer, n, from)}
}

func serverFindings(rs []serverReport) [][]finding {
	out := make([][]finding, len(rs))
	for i, r := range rs {
		out[i] = r.Findings
	}
	return out
}

// checkCommand looks the server's command up as its process would find
// it, and reports whether it is there.
func checkCommand(s config.Server, add func(level, format string, args ...any)) bool {
	cmd := s.Command
	if strings.ContainsRune(cmd, filepath.Separator) && !filepath.IsAbs(cmd) && s.Cwd != "" {
		cmd = filepath.Join(s.Cwd, cmd)
	}
	path, err := exec.LookPath(cmd)
	switch {
	case err == nil:
		add("ok", "command %q is %s", s.Command, path)
		return true
	case errors.Is(err, exec.ErrNotFound):
		add("error", "command %q not found on PATH", s.Command)
	default:
		add("error", "command %q cannot be run: %v", s.Command, errors.Unwrap(err))
	}
	return false
}

// checkTool reports a tool name a client would reject or that mcpx had to
// rewrite, and an inputSchema that is not valid JSON Schema.
func checkTool(server string, raw json.RawMessage, exposed map[[2]string]string,
	add func(level, format string, args ...any)) {
	var t struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Name == "" {
		return // the catalog's problems report it
	}
	name, ok := exposed[[2]string{server, t.Name}]
	switch {
	case !validToolName(t.Name):
		add("warning", "tool name %q would be rejected by clients (want ^[a-zA-Z0-9_-]{1,64}$); mcpx serves it as %q", t.Name, name)
	case ok && !validToolName(name) || ok && !strings.HasSuffix(name, t.Name):
		add("warning", "tool %q is served as %q: with its prefix the name was too long or invalid", t.Name, name)
	}
	if msg := schemaProblem(t.InputSchema); msg != "" {
		add("error", "tool %q: inputSchema %s", t.Name, msg)
	}
}

func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// schemaProblem says why an inputSchema is not what MCP asks (a valid JSON
// Schema of type object); "" when it is.
func schemaProblem(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "is missing"
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "is not JSON: " + err.Error()
	}
	if m, ok := doc.(map[string]any); !ok || m["type"] != "object" {
		return `is not an object schema (MCP wants "type": "object"); mcpx serves {"type":"object"} instead`
	}
	if err := schemaError(doc); err != nil {
		return "is not valid JSON Schema: " + err.Error()
	}
	return ""
}

func (rep *doctorReport) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return printJSON(w, rep)
	}
	file := rep.File
	if file == "" {
		file = "(none)"
	}
	if rep.Profile != "" {
		fmt.Fprintf(w, "config %s, profile %s: %d server(s), expose %s\n", file, rep.Profile, len(rep.Servers), rep.Expose)
	} else {
		fmt.Fprintf(w, "config %s: %d server(s), expose %s\n", file, len(rep.Servers), rep.Expose)
	}
	printFindings(w, rep.Config)
	for _, s := range rep.Servers {
		fmt.Fprintf(w, "\n%s (%s): %s\n", s.Name, s.Transport, s.State)
		printFindings(w, s.Findings)
	}
	fmt.Fprintln(w)
	printFindings(w, rep.Catalog)
	fmt.Fprintf(w, "tools/list as a client receives it (expose %s): %d bytes, about %d tokens\n", rep.Expose, rep.Bytes, rep.Tokens)
	fmt.Fprintf(w, "verdict: %s\n", rep.Verdict)
	return nil
}

func printFindings(w io.Writer, fs []finding) {
	for _, f := range fs {
		fmt.Fprintf(w, "  %-7s %s\n", f.Level+":", f.Message)
	}
}

// hiddenIn names the tools that hide text, with how much, as the server
// names them: ": in sneaky (15), other (2)".
func hiddenIn(tools []json.RawMessage) string {
	var parts []string
	for _, raw := range tools {
		if _, n := hidden.Capability(raw); n > 0 {
			var t struct{ Name string }
			_ = json.Unmarshal(raw, &t)
			parts = append(parts, fmt.Sprintf("%s (%d)", visible(t.Name), n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": in " + strings.Join(parts, ", ")
}

// flagDescriptions names the tools, prompts, resources and templates of
// server whose texts look aimed at the model rather than at the user,
// each finding once with its name, field, family and evidence: what the
// scanner (package scan) finds in those served, and in those withheld
// (new, changed, or flagged at first sight), which are errors until
// `mcpx trust` approves them.
func flagDescriptions(cat *aggregator.Catalog, server string) (warnings, errors []string) {
	others := cat.ToolNames()
	var lengths []int
	for _, e := range cat.Tools {
		lengths = append(lengths, len(e.Description))
	}
	for _, e := range cat.Tools {
		if e.Server != server {
			continue
		}
		for _, f := range scan.Capability(e.JSON, server, others) {
			warnings = append(warnings, fmt.Sprintf("tool %q: %s", e.Name, f))
		}
		if hidden.Outlier(len(e.Description), lengths) {
			warnings = append(warnings, fmt.Sprintf("tool %q: its description is %d bytes, far longer than the other tools'", e.Name, len(e.Description)))
		}
	}
	// Prompts, resources and templates are read by the model too.
	for _, l := range [][]*aggregator.Entry{cat.Prompts, cat.Resources, cat.ResourceTemplates} {
		for _, e := range l {
			if e.Server != server {
				continue
			}
			for _, f := range scan.Capability(e.JSON, server, others) {
				warnings = append(warnings, fmt.Sprintf("%s %q: %s", e.Kind, e.Name, f))
			}
		}
	}
	r := cat.Reviews[server]
	if r == nil {
		return warnings, errors
	}
	for _, d := range r.Diffs(others) {
		if _, withheld := r.Withheld(d.Kind, d.Name); withheld && len(d.Findings) > 0 {
			var why []string
			for _, f := range d.Findings {
				why = append(why, f.String())
			}
			errors = append(errors, fmt.Sprintf("%s %q withheld: %s; `mcpx trust %s` shows it", d.Kind, d.Name, strings.Join(why, "; "), server))
		}
	}
	return warnings, errors
}
