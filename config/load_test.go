package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes a small valid config naming its own location in a server
// name, so a test can tell which file was loaded.
func writeFile(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var data string
	switch filepath.Ext(path) {
	case ".yaml", ".yml":
		data = "servers:\n  s:\n    command: c\n"
	case ".toml":
		data = "[servers.s]\ncommand = \"c\"\n"
	default:
		data = `{"servers": {"s": {"command": "c"}}}`
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadLookupOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // relative to a temp root with work/ and home/
		env   map[string]string
		file  string // LoadOptions.File, relative to the root
		want  string // "" for no file
	}{
		{name: "nothing", want: ""},
		{name: "json first", files: []string{"work/mcpx.toml", "work/mcpx.yml", "work/mcpx.yaml", "work/mcpx.json"}, want: "work/mcpx.json"},
		{name: "yaml before yml", files: []string{"work/mcpx.toml", "work/mcpx.yml", "work/mcpx.yaml"}, want: "work/mcpx.yaml"},
		{name: "yml before toml", files: []string{"work/mcpx.toml", "work/mcpx.yml"}, want: "work/mcpx.yml"},
		{name: "toml", files: []string{"work/mcpx.toml"}, want: "work/mcpx.toml"},
		{name: "work dir before config home", files: []string{"home/mcpx/config.json", "work/mcpx.toml"}, want: "work/mcpx.toml"},
		{name: "config home", files: []string{"home/mcpx/config.yml", "home/mcpx/config.toml"}, want: "home/mcpx/config.yml"},
		{name: "config home ignores mcpx.json", files: []string{"home/mcpx/mcpx.json", "home/mcpx.json"}, want: ""},
		{name: "work dir ignores config.json", files: []string{"work/config.json"}, want: ""},
		{name: "directory is not a file", files: []string{"work/mcpx.json/x.json", "work/mcpx.yaml"}, want: "work/mcpx.yaml"},
		{name: "MCPX_CONFIG before work dir", files: []string{"work/mcpx.json", "other.yaml"},
			env: map[string]string{"MCPX_CONFIG": "other.yaml"}, want: "other.yaml"},
		{name: "empty MCPX_CONFIG is unset", files: []string{"work/mcpx.json"},
			env: map[string]string{"MCPX_CONFIG": ""}, want: "work/mcpx.json"},
		{name: "flag before MCPX_CONFIG", files: []string{"work/mcpx.json", "other.yaml", "flag.toml"},
			env: map[string]string{"MCPX_CONFIG": "other.yaml"}, file: "flag.toml", want: "flag.toml"},
		{name: "file without extension is JSON", files: []string{"mcpx"}, file: "mcpx", want: "mcpx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				writeFile(t, filepath.Join(root, f))
			}
			env := map[string]string{}
			for k, v := range tc.env {
				if k == "MCPX_CONFIG" && v != "" {
					v = filepath.Join(root, v)
				}
				env[k] = v
			}
			opts := &LoadOptions{
				LookupEnv:  envMap(env),
				WorkDir:    filepath.Join(root, "work"),
				ConfigHome: filepath.Join(root, "home"),
			}
			if tc.file != "" {
				opts.File = filepath.Join(root, tc.file)
			}
			cfg, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tc.want != "" {
				want = filepath.Join(root, tc.want)
			}
			if cfg.File != want {
				t.Errorf("loaded %q, want %q", cfg.File, want)
			}
			if n := len(cfg.Servers); (want == "" && n != 0) || (want != "" && n != 1) {
				t.Errorf("%d servers from %q", n, cfg.File)
			}
		})
	}
}

func TestLoadConfigHomeFromEnv(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "xdg/mcpx/config.json"))
	writeFile(t, filepath.Join(root, "home/.config/mcpx/config.toml"))
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "xdg"), "HOME": filepath.Join(root, "home")}, "xdg/mcpx/config.json"},
		{"HOME", map[string]string{"HOME": filepath.Join(root, "home")}, "home/.config/mcpx/config.toml"},
		{"relative XDG_CONFIG_HOME is ignored", map[string]string{"XDG_CONFIG_HOME": "xdg", "HOME": filepath.Join(root, "home")}, "home/.config/mcpx/config.toml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(&LoadOptions{LookupEnv: envMap(tc.env), WorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, tc.want); cfg.File != want {
				t.Errorf("loaded %q, want %q", cfg.File, want)
			}
		})
	}
}

// TestLoadRealEnvironment uses the process environment and working
// directory, as mcpx does (LookupEnv and WorkDir unset).
func TestLoadRealEnvironment(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "xdg"))
	t.Setenv("MCPX_CONFIG", "")
	t.Setenv("MCPX_EXPOSE", "direct")
	t.Setenv("MCPX_SEPARATOR", "")
	t.Setenv("TOKEN", "t-1")
	t.Chdir(t.TempDir())

	cfg, err := Load(nil)
	if err != nil || cfg.File != "" || cfg.Expose != ExposeDirect || cfg.Separator != "_" {
		t.Fatalf("Load(nil) with no file = %+v, %v", cfg, err)
	}

	home := filepath.Join(root, "xdg/mcpx/config.yaml")
	writeFile(t, home)
	if cfg, err = Load(nil); err != nil || cfg.File != home {
		t.Fatalf("Load(nil) = %+v, %v; want %s", cfg, err, home)
	}

	writeFile(t, "mcpx.toml")
	cfg, err = Load(nil)
	if err != nil || filepath.Base(cfg.File) != "mcpx.toml" || filepath.Dir(cfg.File) == "." {
		t.Fatalf("Load(nil) = %+v, %v; want ./mcpx.toml as an absolute path", cfg, err)
	}

	named := filepath.Join(root, "named.json")
	if err := os.WriteFile(named, []byte(`{"servers": {"r": {"url": "http://h/mcp", "headers": {"A": "${TOKEN}"}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPX_CONFIG", named)
	cfg, err = Load(nil)
	if err != nil || cfg.File != named || cfg.Servers[0].Headers["A"] != "t-1" {
		t.Fatalf("Load(nil) = %+v, %v; want %s with TOKEN expanded", cfg, err, named)
	}
}

func TestLoadNamedFileProblems(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "missing.json")
	for _, tc := range []struct {
		name string
		opts LoadOptions
		file string
		msg  string
	}{
		{"flag file missing", LoadOptions{File: missing}, missing, "no such file"},
		{"MCPX_CONFIG missing", LoadOptions{LookupEnv: envMap(map[string]string{"MCPX_CONFIG": missing})}, missing, "no such file (named by MCPX_CONFIG)"},
		{"flag file is a directory", LoadOptions{File: root}, root, "is a directory"},
		{"relative to WorkDir", LoadOptions{File: "missing.json", WorkDir: root}, missing, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.ConfigHome = root
			if opts.LookupEnv == nil {
				opts.LookupEnv = noEnv
			}
			cfg, err := Load(&opts)
			var e *Error
			if !errors.As(err, &e) || e.File != tc.file || e.Msg != tc.msg {
				t.Fatalf("Load = %+v, %#v; want an *Error for %s: %s", cfg, err, tc.file, tc.msg)
			}
		})
	}
}

func TestLoadParseErrorNamesFile(t *testing.T) {
	work := t.TempDir()
	path := filepath.Join(work, "mcpx.json")
	if err := os.WriteFile(path, []byte(`{"servers": {"s": {"command": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(&LoadOptions{LookupEnv: noEnv, WorkDir: work, ConfigHome: work})
	if want := "config " + path + ": servers.s.command: want a string, not a number"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestSettingsPrecedence(t *testing.T) {
	empty, dash := "", "-"
	for _, tc := range []struct {
		name    string
		file    string // mcpx.json content; "" for no file
		env     map[string]string
		expose  string
		sep     *string
		wantExp Expose
		wantSep string
	}{
		{"defaults", "", nil, "", nil, ExposeProxy, "_"},
		{"defaults with a file", `{}`, nil, "", nil, ExposeProxy, "_"},
		{"file", `{"expose": "direct", "separator": "."}`, nil, "", nil, ExposeDirect, "."},
		{"file empty separator", `{"separator": ""}`, nil, "", nil, ExposeProxy, ""},
		{"env over file", `{"expose": "direct", "separator": "."}`,
			map[string]string{"MCPX_EXPOSE": "both", "MCPX_SEPARATOR": "__"}, "", nil, ExposeBoth, "__"},
		{"empty env is unset", `{"expose": "direct", "separator": "."}`,
			map[string]string{"MCPX_EXPOSE": "", "MCPX_SEPARATOR": ""}, "", nil, ExposeDirect, "."},
		{"env without a file", "", map[string]string{"MCPX_EXPOSE": "both"}, "", nil, ExposeBoth, "_"},
		{"flag over env", `{"expose": "direct", "separator": "."}`,
			map[string]string{"MCPX_EXPOSE": "both", "MCPX_SEPARATOR": "__"}, "proxy", &dash, ExposeProxy, "-"},
		{"empty separator flag is a value", `{"separator": "."}`,
			map[string]string{"MCPX_SEPARATOR": "__"}, "", &empty, ExposeProxy, ""},
		{"flag without a file", "", nil, "direct", &dash, ExposeDirect, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(work, "mcpx.json"), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := Load(&LoadOptions{
				LookupEnv: envMap(tc.env), WorkDir: work, ConfigHome: work,
				Expose: tc.expose, Separator: tc.sep,
			})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Expose != tc.wantExp || cfg.Separator != tc.wantSep {
				t.Errorf("expose %q separator %q, want %q %q", cfg.Expose, cfg.Separator, tc.wantExp, tc.wantSep)
			}
			if (tc.file == "") != (cfg.File == "") || strings.Contains(cfg.File, "config.") {
				t.Errorf("File = %q", cfg.File)
			}
		})
	}
}
