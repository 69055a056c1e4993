package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream/auth"
)

func newAuthCmd(ios *streams, g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Log in to remote servers that use OAuth, see and end those logins",
		Long: `Remote MCP servers behind OAuth answer 401 until you log in. mcpx logs in
once per server (authorization code with PKCE, in your browser) and keeps the
tokens in the OS keychain, or in 0600 files under ~/.config/mcpx/tokens where
there is none (MCPX_KEYRING=off forces the files). Every mcpx process,
serve included, then uses and refreshes them.`,
	}
	cmd.AddCommand(newAuthLoginCmd(ios, g), newAuthStatusCmd(ios, g), newAuthLogoutCmd(ios, g))
	return cmd
}

type authLoginOptions struct {
	server    string
	timeout   time.Duration
	noBrowser bool
	register  bool
}

func newAuthLoginCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &authLoginOptions{}
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to a remote server in the browser and store its tokens",
		Long: `Log in to SERVER: mcpx finds its authorization server, registers itself
when the config gives no auth.clientId, and opens the authorization page in
$BROWSER, or the system browser, listening on http://127.0.0.1:PORT/callback
for the answer. The URL is printed too, for when no browser opens.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.server = args[0]
			if o.timeout <= 0 {
				return usagef("--timeout must be positive")
			}
			return authLoginRun(cmd.Context(), ios, g, o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for the browser")
	cmd.Flags().BoolVar(&o.noBrowser, "no-browser", false, "only print the URL to open")
	cmd.Flags().BoolVar(&o.register, "register", false, "register mcpx with the authorization server again instead of reusing the kept registration")
	return cmd
}

type authStatusOptions struct{ json bool }

func newAuthStatusCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &authStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every remote server's login: logged in (expires ...), needs login, not required",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return authStatusRun(cmd.Context(), ios, g, o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON for scripts")
	return cmd
}

func newAuthLogoutCmd(ios *streams, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "logout SERVER",
		Short: "Revoke a server's tokens where it offers revocation, and delete them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return authLogoutRun(cmd.Context(), ios, g, args[0])
		},
	}
}

// authEnv is what the auth commands start from: the config, the secret
// redactor and the token store.
type authEnv struct {
	cfg   *config.Config
	red   *redactor
	store auth.Store
}

func openAuthEnv(ios *streams, g *globalFlags) (*authEnv, error) {
	// The profile counts: an unknown one is a usage error, status lists
	// only its servers, and login and logout refuse a server it leaves out.
	cfg, err := config.Load(g.loadOptions())
	if err != nil {
		return nil, exitWith(ios, 2, err)
	}
	store, err := openTokenStore()
	if err != nil {
		return nil, exitWith(ios, 1, err)
	}
	return &authEnv{cfg: cfg, red: newRedactor(cfg.Secrets()), store: store}, nil
}

// openTokenStore opens the OS keychain, or the token files where there is
// none or MCPX_KEYRING=off.
func openTokenStore() (auth.Store, error) {
	off := strings.EqualFold(os.Getenv("MCPX_KEYRING"), "off")
	return auth.OpenStore(&auth.StoreOptions{NoKeyring: off})
}

// authenticator returns the login of the server named name, or an error
// saying why it has none.
func (e *authEnv) authenticator(name string) (*auth.Authenticator, error) {
	for _, s := range e.cfg.Servers {
		if s.Name != name {
			continue
		}
		switch p := e.cfg.Profile; {
		case p != nil && !p.Includes(name):
			return nil, fmt.Errorf("server %s is not in profile %s (its servers: %s)", name, p.Name, strings.Join(p.Servers, ", "))
		case s.Transport == config.TransportStdio:
			return nil, fmt.Errorf("server %s runs a command: logins are for remote (url) servers", name)
		case s.Auth != nil && s.Auth.Disabled:
			return nil, fmt.Errorf("server %s has \"auth\": false in the config: mcpx never logs in to it", name)
		case s.StaticAuthorization():
			return nil, fmt.Errorf("server %s sends a static Authorization header from the config, which wins over a login", name)
		case s.Problem != "":
			// Its URL or settings are incomplete: a login would go astray.
			return nil, fmt.Errorf("server %s: %s", name, s.Problem)
		}
		return auth.New(&auth.Options{Server: s.Name, URL: s.URL, Config: s.Auth, Store: e.store})
	}
	where := "the config"
	if e.cfg.File != "" {
		where = e.cfg.File
	}
	return nil, fmt.Errorf("no server %q in %s", name, where)
}

func authLoginRun(ctx context.Context, ios *streams, g *globalFlags, o *authLoginOptions) error {
	env, err := openAuthEnv(ios, g)
	if err != nil {
		return err
	}
	a, err := env.authenticator(o.server)
	if err != nil {
		return exitWith(ios, 2, err)
	}
	if o.register {
		if err := a.ForgetRegistration(ctx); err != nil {
			return exitWith(ios, 1, errors.New(env.red.Redact(err.Error())))
		}
	}
	flow, err := a.StartLogin(ctx)
	if errors.Is(err, auth.ErrNotRequired) {
		fmt.Fprintf(ios.Out, "%s does not ask for a login: nothing to do\n", o.server)
		return nil
	}
	if err != nil {
		return exitWith(ios, 1, errors.New(env.red.Redact(err.Error())))
	}
	defer flow.Close()
	if !o.noBrowser {
		fmt.Fprintf(ios.Err, "Opening your browser to log in to %s.\n", o.server)
		if err := auth.OpenBrowser(flow.URL, os.Getenv("BROWSER")); err != nil {
			fmt.Fprintf(ios.Err, "Could not open a browser (%v).\n", err)
		}
	}
	fmt.Fprintf(ios.Err, "If no browser opened, visit this URL:\n\n  %s\n\nWaiting up to %s for the browser to come back to %s (Ctrl-C cancels)...\n",
		flow.URL, o.timeout, flow.RedirectURI)
	res, err := flow.Wait(ctx, o.timeout)
	if errors.Is(err, context.Canceled) {
		return exitError{130}
	}
	if err != nil {
		return exitWith(ios, 1, fmt.Errorf("login to %s: %s", o.server, env.red.Redact(err.Error())))
	}
	fmt.Fprintln(ios.Out, loginSummary(o.server, res, time.Now()))
	return nil
}

// loginSummary is one line: who, which scopes, until when, where stored.
func loginSummary(server string, res *auth.LoginResult, now time.Time) string {
	s := "Logged in to " + server
	if res.Account != "" {
		s += " as " + res.Account
	}
	if len(res.Scopes) > 0 {
		s += " with scopes " + strings.Join(res.Scopes, " ")
	}
	if !res.ExpiresAt.IsZero() {
		s += "; the token expires " + when(res.ExpiresAt, now) + " and is refreshed as needed"
	}
	return s + "; stored in " + res.Where
}

// when is a time for people: "in 59m", "3m ago", with the date when far.
func when(t, now time.Time) string {
	d := t.Sub(now).Round(time.Minute)
	switch {
	case d > 48*time.Hour || d < -48*time.Hour:
		return t.Local().Format("2006-01-02 15:04")
	case d >= 0:
		return "in " + strings.TrimSuffix(d.String(), "0s")
	default:
		return strings.TrimSuffix((-d).String(), "0s") + " ago"
	}
}

// authStatusJSON is one server in `mcpx auth status --json`.
type authStatusJSON struct {
	Name        string     `json:"name"`
	State       string     `json:"state"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
	Refreshable bool       `json:"refreshable,omitempty"`
	Scopes      []string   `json:"scopes,omitempty"`
	Account     string     `json:"account,omitempty"`
	Issuer      string     `json:"issuer,omitempty"`
	Note        string     `json:"note,omitempty"`
}

func authStatusRun(ctx context.Context, ios *streams, g *globalFlags, o *authStatusOptions) error {
	env, err := openAuthEnv(ios, g)
	if err != nil {
		return err
	}
	var rows []authStatusJSON
	remote := func(s config.Server) bool {
		return s.Transport != config.TransportStdio && (env.cfg.Profile == nil || env.cfg.Profile.Includes(s.Name))
	}
	for _, s := range env.cfg.Servers {
		if remote(s) {
			rows = append(rows, authStatusJSON{Name: s.Name})
		}
	}
	// Each server is asked at once: a slow one does not hold up the rest.
	var wg sync.WaitGroup
	i := 0
	for _, s := range env.cfg.Servers {
		if !remote(s) {
			continue
		}
		row := &rows[i]
		i++
		wg.Add(1)
		go func() {
			defer wg.Done()
			*row = authStatusOf(ctx, env, s)
		}()
	}
	wg.Wait()
	if o.json {
		if rows == nil {
			rows = []authStatusJSON{}
		}
		return printJSON(ios.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(ios.Err, "no remote servers configured")
	}
	now := time.Now()
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		state := r.State
		if r.State == string(auth.StateLoggedIn) && r.ExpiresAt != nil {
			verb := "expires"
			if r.ExpiresAt.Before(now) {
				verb = "expired"
			}
			state += " (" + verb + " " + when(*r.ExpiresAt, now)
			if r.Refreshable {
				state += ", refreshable"
			}
			state += ")"
		}
		table = append(table, []string{r.Name, state, r.Account, strings.Join(r.Scopes, " "), r.Note})
	}
	return printTable(ios.Out, ios.OutTTY, []string{"NAME", "STATE", "ACCOUNT", "SCOPES", "NOTE"}, table)
}

func authStatusOf(ctx context.Context, env *authEnv, s config.Server) authStatusJSON {
	row := authStatusJSON{Name: s.Name}
	switch {
	case s.Auth != nil && s.Auth.Disabled:
		row.State, row.Note = string(auth.StateNotRequired), `"auth": false`
		return row
	case s.StaticAuthorization():
		row.State, row.Note = string(auth.StateNotRequired), "static Authorization header"
		return row
	case !s.Enabled:
		row.Note = "disabled"
	}
	a, err := auth.New(&auth.Options{Server: s.Name, URL: s.URL, Config: s.Auth, Store: env.store})
	if err != nil {
		row.State, row.Note = "unknown", err.Error()
		return row
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := a.Status(ctx, true)
	if err != nil {
		row.State, row.Note = "unknown", env.red.Redact(err.Error())
		return row
	}
	row.State, row.Scopes, row.Account, row.Refreshable, row.Issuer = string(st.State), st.Scopes, st.Account, st.Refreshable, st.Issuer
	if !st.ExpiresAt.IsZero() {
		t := st.ExpiresAt
		row.ExpiresAt = &t
	}
	if st.Why != "" {
		row.Note = joinNonEmpty(row.Note, st.Why)
	}
	if st.State == auth.StateNeedsLogin {
		row.Note = joinNonEmpty(row.Note, "run `mcpx auth login "+s.Name+"`")
	}
	return row
}

func authLogoutRun(ctx context.Context, ios *streams, g *globalFlags, server string) error {
	env, err := openAuthEnv(ios, g)
	if err != nil {
		return err
	}
	a, err := env.authenticator(server)
	if err != nil {
		return exitWith(ios, 2, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := a.Logout(ctx)
	if err != nil {
		return exitWith(ios, 1, errors.New(env.red.Redact(err.Error())))
	}
	switch {
	case !res.Deleted:
		fmt.Fprintf(ios.Out, "No stored login for %s\n", server)
	case res.Revoked:
		fmt.Fprintf(ios.Out, "Logged out of %s: the tokens were revoked and deleted\n", server)
	case res.RevokeErr != nil:
		fmt.Fprintf(ios.Out, "Logged out of %s: the tokens were deleted, but revoking them failed: %s\n", server, env.red.Redact(res.RevokeErr.Error()))
	default:
		fmt.Fprintf(ios.Out, "Logged out of %s: the tokens were deleted (the server offers no revocation)\n", server)
	}
	return nil
}
