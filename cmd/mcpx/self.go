package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpx/mcpx/config"
)

// depthEnv is the marker mcpx sets for every child it starts: how deep in a
// chain of mcpx processes the child runs (1 for a child of a top-level
// mcpx). An mcpx that reads it knows it was started by mcpx.
const depthEnv = "MCPX_DEPTH"

// maxDepth is the deepest an mcpx starts stdio servers. mcpx behind mcpx
// (one level, with its own config) is legitimate; a chain this deep is a
// loop that the checks in guardRecursion did not recognise (a wrapper
// script, say), and stopping it here bounds the processes it can fork.
const maxDepth = 3

// guardRecursion keeps a config that starts mcpx itself from forking
// without end. A client config (Claude Desktop, Cursor) usually holds the
// entry that starts mcpx, and --config may point at exactly that file:
// each mcpx would then start another. So, for every stdio server:
//
//   - at depth maxDepth or more, none is started;
//   - an entry that starts mcpx itself (this executable, a command named
//     mcpx, or npx's @mcpx/mcpx) is skipped, unless its args name another
//     config file with --config;
//   - the others get depthEnv = depth+1, so the next mcpx knows.
//
// Skipped servers are disabled; each skip is returned as a warning that
// says why. depth is this process's depthEnv (0 when unset); self is this
// executable's path ("" when unknown).
func guardRecursion(cfg *config.Config, depth int, self string) []string {
	var warnings []string
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		if s.Transport != config.TransportStdio || !s.Enabled {
			continue
		}
		switch {
		case depth >= maxDepth:
			s.Enabled = false
			warnings = append(warnings, fmt.Sprintf("servers.%s: not started: this mcpx runs %d deep under other mcpx processes (%s=%d, the limit), so a config that starts mcpx cannot fork without bound",
				s.Name, depth, depthEnv, depth))
			continue
		case startsSelf(s, self) && !namesOtherConfig(s, cfg.File):
			s.Enabled = false
			warnings = append(warnings, fmt.Sprintf("servers.%s: skipped: it starts mcpx itself (%s) with this same config, which would start mcpx again without end",
				s.Name, s.Command))
			continue
		}
		env := make(map[string]string, len(s.Env)+1)
		for k, v := range s.Env {
			env[k] = v
		}
		env[depthEnv] = strconv.Itoa(depth + 1)
		s.Env = env
	}
	return warnings
}

// currentDepth reads depthEnv; anything but a small non-negative number
// counts as the limit, so a garbled marker cannot restart the count.
func currentDepth(lookup func(string) (string, bool)) int {
	v, ok := lookup(depthEnv)
	if !ok || v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return maxDepth
	}
	return n
}

// startsSelf reports whether a server's command runs mcpx: this very
// executable, any executable named mcpx, or the npm package (npx -y
// @mcpx/mcpx, also behind cmd /c).
func startsSelf(s *config.Server, self string) bool {
	base := strings.ToLower(filepath.Base(s.Command))
	if strings.TrimSuffix(base, ".exe") == "mcpx" {
		return true
	}
	for _, a := range s.Args {
		if a == "@mcpx/mcpx" || strings.HasPrefix(a, "@mcpx/mcpx@") {
			return true
		}
	}
	if self == "" {
		return false
	}
	path := s.Command
	if strings.ContainsRune(path, '/') || strings.ContainsRune(path, filepath.Separator) {
		if !filepath.IsAbs(path) && s.Cwd != "" {
			path = filepath.Join(s.Cwd, path)
		}
	} else if p, err := exec.LookPath(path); err == nil {
		path = p
	}
	return sameFile(path, self)
}

// namesOtherConfig reports whether a server's args pass --config with a
// file other than ours (a relative one is taken from the server's cwd).
func namesOtherConfig(s *config.Server, ours string) bool {
	for i, a := range s.Args {
		var file string
		switch {
		case a == "--config" && i+1 < len(s.Args):
			file = s.Args[i+1]
		case strings.HasPrefix(a, "--config="):
			file = strings.TrimPrefix(a, "--config=")
		default:
			continue
		}
		if !filepath.IsAbs(file) && s.Cwd != "" {
			file = filepath.Join(s.Cwd, file)
		}
		return ours == "" || !sameFile(file, ours)
	}
	return false
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
