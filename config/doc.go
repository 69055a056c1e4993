// Package config owns mcpx's configuration: the types ([Config], [Server],
// [Browser], [Filter]), finding and loading the file ([Load]), ${VAR}
// expansion, and validation whose errors ([*Error]) name the file, the
// server and the field.
//
// [Load] looks for, in order: [LoadOptions].File (--config), $MCPX_CONFIG,
// ./mcpx.{json,yaml,yml,toml}, $XDG_CONFIG_HOME/mcpx/config.{json,yaml,yml,toml}
// (~/.config/mcpx/ without XDG_CONFIG_HOME). Finding no file is not an
// error. The top-level settings expose and separator come from, in order of
// precedence, the flag, MCPX_EXPOSE / MCPX_SEPARATOR, the file, the default.
//
// Servers live under "servers" or its alias "mcpServers", so Claude Desktop,
// Cursor, Claude Code and VS Code files work unchanged:
//
//	{
//	  "mcpServers": {
//	    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
//	    "remote": {"type": "http", "url": "https://example.com/mcp",
//	               "headers": {"Authorization": "Bearer ${TOKEN}"}}
//	  }
//	}
//
// Loading it:
//
//	cfg, err := config.Load(&config.LoadOptions{File: configFlag})
//	if err != nil {
//		return err // e.g. config mcpx.json: servers.remote.url: want an http:// or https:// URL
//	}
//	for _, w := range cfg.Warnings {
//		logger.Warn(w)
//	}
//	redact := cfg.Secrets() // values the logger must never print
//
// ${VAR} and ${VAR:-default} expand in args, env values, cwd, url, header
// values, and the browser's url and token. A variable that is not set
// stops only what uses it: the server is kept with [Server].Problem and
// never started, the browser section is left out, the http section gets
// [HTTP].Problem; the last two with a warning. Neither errors nor warnings ever
// contain an env value, a header value or a token; [Config.Secrets] lists
// them for the logger to redact.
//
// A running mcpx follows its file with [Watch], which reports each new
// config that loads with the [Changes] against the running one ([Compare]:
// servers added, removed, changed). [AddServer], [RemoveServer] and
// [SetEnabled] edit a JSON (or JSON with comments) file in place, keeping
// every other byte, and write it atomically after checking that it loads.
//
// The package has no global state: each call uses its own viper instance.
package config
