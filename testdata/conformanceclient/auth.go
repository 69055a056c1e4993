package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"
)

// isAuth reports whether a scenario is one of the suite's OAuth ones.
func isAuth(scenario string) bool { return strings.HasPrefix(scenario, "auth/") }

// clientMetadataURL is the client ID metadata document the suite's
// authorization servers expect a client to offer (auth/basic-cimd); the
// Go SDK's everything-client offers the same.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// secretEnv carries a pre-registered client's secret to mcpx: the config
// may only name it as ${VAR}.
const secretEnv = "MCPX_CONFORMANCE_CLIENT_SECRET"

// authEntry adds to the server's config entry what a user would write for
// the auth scenario: the client ID metadata document mcpx offers where the
// authorization server takes those, and the pre-registered client of the
// context (client_id, client_secret, issuer) where the scenario gives one.
// It returns the environment that goes with it.
func authEntry(entry map[string]any, scenarioContext map[string]any) (env []string) {
	a := map[string]any{"clientMetadataUrl": clientMetadataURL}
	if id, ok := scenarioContext["client_id"].(string); ok && id != "" {
		a["clientId"] = id
		if secret, ok := scenarioContext["client_secret"].(string); ok && secret != "" {
			a["clientSecret"] = "${" + secretEnv + "}"
			env = append(env, secretEnv+"="+secret)
		}
		if issuer, ok := scenarioContext["issuer"].(string); ok && issuer != "" {
			a["issuer"] = issuer
		}
	}
	entry["auth"] = a
	return env
}

// authScenario logs in, lists tools and calls test-tool, as the Go SDK's
// everything-client does. When a step fails because mcpx says to run
// `mcpx auth login`, it logs in once more and tries the step again, as a
// user would: that is how mcpx meets a 403 insufficient_scope (step-up,
// with the scopes of both) and a resource that moved to another
// authorization server. Only once: a server that keeps refusing
// (auth/scope-retry-limit) gets no endless logins.
func (h *harness) authScenario(ctx context.Context) error {
	if err := h.login(ctx); err != nil {
		return err
	}
	again := true
	step := func(f func() error) error {
		err := f()
		var me *mcpxError
		if err == nil || !again || !errors.As(err, &me) || !strings.Contains(me.stderr, "mcpx auth login") {
			return err
		}
		again = false
		log.Printf("%v: logging in again", err)
		if lerr := h.login(ctx); lerr != nil {
			return errors.Join(err, lerr)
		}
		return f()
	}
	if err := step(func() error { _, err := h.listTools(ctx); return err }); err != nil {
		return err
	}
	return step(func() error { return h.call(ctx, "test-tool", map[string]any{}) })
}

// browseFlag makes this program play the user's browser (see browse):
// mcpx runs it as $BROWSER.
const browseFlag = "--browse"

// login runs `mcpx auth login` with this program as the browser, which
// follows the authorization URL to mcpx's loopback callback: the suite's
// authorization servers approve at once, with no person.
func (h *harness) login(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program, to play the browser: %w", err)
	}
	if strings.ContainsAny(self, " \t'\"") {
		return fmt.Errorf("%s: $BROWSER cannot name a path with spaces or quotes", self)
	}
	env := h.env
	h.env = append(env[:len(env):len(env)], "BROWSER="+self+" "+browseFlag)
	defer func() { h.env = env }()
	_, err = h.mcpxRun(ctx, "auth", "login", serverName, "--timeout", "30s")
	return err
}

// browse is the browser: it GETs the authorization URL and follows the
// redirects, the last of which is mcpx's callback.
func browse(u string) int {
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		log.Printf("browse: %v", err)
		return 1
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return 0
}
