package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

type serversOptions struct{ json bool }

func newServersCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &serversOptions{}
	var serverURL string
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "Show each configured server: transport, state, counts, error, connect time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if r := remoteFor(serverURL); r != nil {
				st, err := r.servers(cmd.Context())
				if err != nil {
					return err
				}
				c, err := r.catalog(cmd.Context())
				if err != nil {
					return err
				}
				return serversRun(ios, st, nil, c, o)
			}
			s, err := openReady(cmd.Context(), ios, g)
			if err != nil {
				return err
			}
			defer s.close()
			if s.cfg.File != "" {
				// On stderr: the table and the JSON stay the servers alone.
				file, _ := filepath.Abs(s.cfg.File)
				fmt.Fprintln(s.stderr, "config:", file) // servers may be logging meanwhile
			}
			return serversRun(ios, s.agg.Upstreams(), s.agg.Browser(cmd.Context(), true), s.agg.Catalog(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON for scripts")
	addServerURL(cmd, &serverURL)
	return cmd
}

// serverJSON is one server in `mcpx servers --json`.
type serverJSON struct {
	Name              string `json:"name"`
	Transport         string `json:"transport"`
	State             string `json:"state"`
	Error             string `json:"error,omitempty"`
	ConnectMillis     int64  `json:"connectMs,omitempty"`
	Server            string `json:"serverName,omitempty"`
	ServerVersion     string `json:"serverVersion,omitempty"`
	ProtocolVersion   string `json:"protocolVersion,omitempty"`
	Tools             int    `json:"tools"`
	Resources         int    `json:"resources"`
	ResourceTemplates int    `json:"resourceTemplates"`
	Prompts           int    `json:"prompts"`
	// Withheld counts the tools and prompts changed or added since the
	// user approved the server's (mcpx trust shows them).
	Withheld   int      `json:"withheld"`
	Collisions []string `json:"collisions,omitempty"`
	// WaitingFor is the connect step a starting server is in (spawn,
	// connect, initialize, list), since WaitingMillis ago.
	WaitingFor    string `json:"waitingFor,omitempty"`
	WaitingMillis int64  `json:"waitingMs,omitempty"`
	// LastLine is the last line the server printed on LastStream (stderr,
	// or stdout when it was not JSON-RPC).
	LastLine   string `json:"lastLine,omitempty"`
	LastStream string `json:"lastStream,omitempty"`
}

// browserJSON is the browser in `mcpx servers --json`.
type browserJSON struct {
	Name           string `json:"name"`
	Transport      string `json:"transport"`
	State          string `json:"state"`
	URL            string `json:"url,omitempty"`
	RelayReachable bool   `json:"relayReachable"`
	Extension      string `json:"extension,omitempty"`
	Clients        int    `json:"clients,omitempty"` // MCP clients sharing the relay
	Error          string `json:"error,omitempty"`
	Tools          int    `json:"tools"`
}

func browserRow(b *browser.Status, c *aggregator.Catalog) browserJSON {
	tools := 0
	for _, t := range c.Tools {
		if t.Server == config.BrowserServerName {
			tools++
		}
	}
	state := "failed"
	switch {
	case b.Extension != "":
		state = "connected"
	case b.Reachable:
		state = "no browser"
	}
	transport := "relay"
	if b.Mode != "" {
		transport = b.Mode
	}
	return browserJSON{Name: config.BrowserServerName, Transport: transport, State: state, URL: b.URL,
		RelayReachable: b.Reachable, Extension: b.Extension, Clients: b.Clients, Error: b.Err, Tools: tools}
}

// serversRun prints the servers; the exit status is 1 when one of them
// failed, so that a script can tell without parsing.
func serversRun(ios *streams, statuses []upstream.Status, b *browser.Status, c *aggregator.Catalog, o *serversOptions) error {
	if err := printServers(ios, statuses, b, c, o); err != nil {
		return err
	}
	return anyFailed(statuses, "")
}

func printServers(ios *streams, statuses []upstream.Status, b *browser.Status, c *aggregator.Catalog, o *serversOptions) error {
	now := time.Now()
	withheld := c.Withheld()
	collisions := map[string][]string{}
	for _, col := range c.Collisions {
		collisions[col.Dropped] = append(collisions[col.Dropped], col.String())
	}
	if o.json {
		out := make([]serverJSON, 0, len(statuses))
		for _, s := range statuses {
			out = append(out, serverJSON{
				Name: s.Name, Transport: string(s.Transport), State: string(s.State), Error: s.Err,
				ConnectMillis: s.ConnectTime.Milliseconds(), Server: s.ServerInfo.Name,
				ServerVersion: s.ServerInfo.Version, ProtocolVersion: s.ProtocolVersion,
				Tools: s.Tools, Resources: s.Resources, ResourceTemplates: s.ResourceTemplates,
				Prompts: s.Prompts, Withheld: withheld[s.Name], Collisions: collisions[s.Name],
				WaitingFor: s.Step, LastLine: s.LastLine, LastStream: s.LastStream,
			})
			if s.Step != "" {
				out[len(out)-1].WaitingMillis = max(now.Sub(s.StepSince).Milliseconds(), 1)
			}
		}
		if b != nil {
			return printJSON(ios.Out, struct {
				Servers []serverJSON `json:"servers"`
				Browser browserJSON  `json:"browser"`
				Pages   *pageJSON    `json:"pages,omitempty"`
			}{out, browserRow(b, c), pageRow(c, collisions[aggregator.PageServerName])})
		}
		return printJSON(ios.Out, out)
	}
	header := []string{"NAME", "TRANSPORT", "STATE", "TOOLS", "RESOURCES", "PROMPTS", "WITHHELD", "CONNECT", "DETAIL"}
	rows := make([][]string, 0, len(statuses))
	for _, s := range statuses {
		connect := ""
		if s.State == upstream.StateConnected {
			connect = s.ConnectTime.Round(time.Millisecond).String()
		}
		msg := why(s, now)
		if n := len(collisions[s.Name]); n > 0 {
			msg = joinNonEmpty(msg, fmt.Sprintf("%d name collision(s): %s", n, collisions[s.Name][0]))
		}
		if withheld[s.Name] > 0 {
			msg = joinNonEmpty(msg, "run `mcpx trust "+s.Name+"` to review what is withheld")
		}
		rows = append(rows, []string{s.Name, string(s.Transport), string(s.State),
			strconv.Itoa(s.Tools), strconv.Itoa(s.Resources + s.ResourceTemplates), strconv.Itoa(s.Prompts),
			strconv.Itoa(withheld[s.Name]), connect, msg})
	}
	if b != nil {
		r := browserRow(b, c)
		note := r.Error
		if r.Clients > 0 {
			note = joinNonEmpty(fmt.Sprintf("%d MCP client(s) share the relay", r.Clients), note)
		}
		if r.Extension != "" {
			note = joinNonEmpty("browser: "+r.Extension, note)
		}
		rows = append(rows, []string{r.Name, r.Transport, r.State, strconv.Itoa(r.Tools), "0", "0", "", "", note})
		if p := pageRow(c, collisions[aggregator.PageServerName]); p != nil {
			rows = append(rows, p.tableRow())
		}
	}
	if len(statuses) == 0 && b == nil {
		fmt.Fprintln(ios.Err, "no servers configured")
	}
	return printTable(ios.Out, ios.OutTTY, header, rows)
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
