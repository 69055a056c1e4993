// Package authtest runs testdata/node/oauth-server.mjs, an OAuth-protected
// MCP server assembled from the official TypeScript SDK (mcpAuthRouter,
// requireBearerAuth), for the tests of OAuth logins; it is the httptest of
// upstream/auth. Its authorization endpoint approves at once, so [Browse]
// plays the user's browser with a plain HTTP GET.
package authtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// Server is a running OAuth-protected MCP server.
type Server struct {
	URL  string // the MCP endpoint, http://127.0.0.1:PORT/mcp
	Base string // the issuer and authorization server
}

// Start runs the server until the test ends. env adds variables, e.g.
// "OAUTH_TOKEN_TTL=5", or "OAUTH_STATIC_CLIENT=id:secret" for a client
// registered beforehand. A missing node or npm package skips the test, or
// fails it under MCPX_REQUIRE_PEERS=1 (see [testenv.NeedNodePeers]).
// Base+"/open" is the same MCP server without authorization.
func Start(t testing.TB, env ...string) *Server {
	t.Helper()
	dir := testenv.NeedNodePeers(t)
	cmd := exec.Command("node", filepath.Join(dir, "oauth-server.mjs"))
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node (needed for the OAuth test server): %v", err)
	}
	t.Cleanup(func() {
		stdin.Close() // the server exits when its stdin ends
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the OAuth test server did not start: %v", err)
	}
	var v struct{ URL string }
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("the OAuth test server said %q: %v", line, err)
	}
	return &Server{URL: v.URL, Base: strings.TrimSuffix(v.URL, "/mcp")}
}

// Log is what the server recorded of its clients' requests.
type Log struct {
	Registrations []struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	} `json:"registrations"`
	// RegistrationRequests are the registration requests' bodies as sent.
	RegistrationRequests []map[string]any `json:"registrationRequests"`
	// MetadataDocuments are the client ID metadata documents fetched.
	MetadataDocuments []string `json:"metadataDocuments"`
	// Authorize holds the query of each authorization request.
	Authorize []map[string]string `json:"authorize"`
	Token     []struct {
		GrantType       string `json:"grant_type"`
		Resource        string `json:"resource"`
		HasCodeVerifier bool   `json:"has_code_verifier"`
		// ClientID is the form's client_id, else the one in HTTP Basic
		// authentication.
		ClientID        string `json:"client_id"`
		HasClientSecret bool   `json:"has_client_secret"`
	} `json:"token"`
	Revoke []struct {
		TokenTypeHint string `json:"token_type_hint"`
	} `json:"revoke"`
	Refreshes int `json:"refreshes"`
}

// Log returns what the server recorded so far.
func (s *Server) Log(t testing.TB) Log {
	t.Helper()
	resp, err := http.Get(s.Base + "/test/log")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l Log
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

// Expire makes every access token stop working: the next use gets a 401.
func (s *Server) Expire(t testing.TB) { s.control(t, "expire", nil) }

// Revoke revokes every token, refresh tokens included.
func (s *Server) Revoke(t testing.TB) { s.control(t, "revoke", nil) }

// Settings change what the authorization server says. The zero value is
// how the server starts.
type Settings struct {
	// Iss is the iss parameter of authorization responses (RFC 9207):
	// "" (none), "correct", "wrong" (another server's), or "normalized"
	// (the issuer less its final slash, which only a client that
	// normalizes URLs would take for it).
	Iss string `json:"iss"`
	// IssAdvertised puts authorization_response_iss_parameter_supported
	// in the metadata.
	IssAdvertised bool `json:"issAdvertised"`
	// OfflineAccess lists offline_access in the authorization server's
	// scopes_supported.
	OfflineAccess bool `json:"offlineAccess"`
}

// Configure replaces the server's settings.
func (s *Server) Configure(t testing.TB, set Settings) {
	t.Helper()
	if set.Iss == "" {
		set.Iss = "omit"
	}
	s.control(t, "config", set)
}

// MigrateTo moves the resource to the authorization server of other: its
// metadata names other's issuer from now on, the tokens s issued get a
// 401, and other's are good.
func (s *Server) MigrateTo(t testing.TB, other *Server) {
	t.Helper()
	s.control(t, "migrate", map[string]string{"to": other.Base})
}

// Rotate gives the server a new signing key (OAUTH_JWT=1): its JWK Set
// serves it from now on, in place of the old one.
func (s *Server) Rotate(t testing.TB) { s.control(t, "rotate", nil) }

// Mint returns a JWT access token signed with the server's current key
// (OAUTH_JWT=1): a good token's claims with claims merged over them (a
// nil value removes one; aud must be given) and header's fields in its
// header.
func (s *Server) Mint(t testing.TB, claims, header map[string]any) string {
	t.Helper()
	var out struct{ Token string }
	s.call(t, "mint", map[string]any{"claims": claims, "header": header}, &out)
	return out.Token
}

func (s *Server) control(t testing.TB, what string, body any) {
	t.Helper()
	s.call(t, what, body, nil)
}

// call POSTs body to /test/what and reads the answer into out (nil: not
// read).
func (s *Server) call(t testing.TB, what string, body, out any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.Base+"/test/"+what, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/test/%s: %s", what, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("/test/%s: %v", what, err)
		}
	}
}

// Browse plays the user's browser: it follows the authorization URL, which
// the server approves at once, to the loopback callback, and returns the
// callback's answer.
func Browse(t testing.TB, u string) *http.Response {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("browse %s: %v", u, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
