package accesstoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

const (
	// defaultKeysTTL is how long fetched keys are used before they are
	// fetched again, when the answer's Cache-Control says nothing: a key
	// the issuer withdrew stops working within it.
	defaultKeysTTL = 5 * time.Minute
	// minKeysTTL and maxKeysTTL bound what Cache-Control may ask for.
	minKeysTTL, maxKeysTTL = 30 * time.Second, 24 * time.Hour
	// minRefetch is the least time between two fetches: a token naming a
	// key not yet seen (the issuer rotated its keys) fetches them again,
	// but a stream of tokens with made-up key IDs cannot make mcpx ask
	// the issuer more than once in that time.
	minRefetch = time.Second
	// fetchTimeout bounds one fetch of the metadata and the keys.
	fetchTimeout = 10 * time.Second
	// maxKeysBytes bounds the key set's document.
	maxKeysBytes = 1 << 20
)

// keySet is the issuer's signing keys, fetched on first use and cached;
// fetched again when they are stale or a token names a key they lack, one
// fetch at a time, at most one per minRefetch. Keys that were good stay
// in use while the issuer cannot be reached.
type keySet struct {
	hc     *http.Client
	issuer string
	now    func() time.Time

	mu       sync.Mutex
	url      string // the JWK Set's URL: configured, or from the issuer's metadata
	keys     []jose.JSONWebKey
	expires  time.Time     // when keys are stale
	fetched  time.Time     // when the last fetch ended, good or not
	err      error         // the last fetch's error
	fetching chan struct{} // closed when the fetch under way ends; nil when none is
}

// find returns the keys a token signed with key ID kid may be checked
// with: the key of that ID, or every key when kid is "".
func (s *keySet) find(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	for fetchedOnce := false; ; {
		s.mu.Lock()
		if keys := match(s.keys, kid); len(keys) > 0 && (fetchedOnce || s.now().Before(s.expires)) {
			s.mu.Unlock()
			return keys, nil
		}
		if fetchedOnce {
			err := s.err
			s.mu.Unlock()
			switch {
			case err != nil:
				return nil, err
			case kid != "":
				return nil, fmt.Errorf("the issuer has no key %q", kid)
			default:
				return nil, errors.New("the issuer has no signing keys")
			}
		}
		wait := s.fetching
		if wait == nil {
			wait = make(chan struct{})
			s.fetching = wait
			delay := s.fetched.Add(minRefetch).Sub(s.now())
			s.mu.Unlock()
			// The fetch serves every request waiting for it, so one
			// client that gives up does not cancel it.
			go s.refresh(context.WithoutCancel(ctx), delay, wait)
		} else {
			s.mu.Unlock()
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		fetchedOnce = true
	}
}

// Probe fetches the issuer's keys now, as a token would, and says how
// many signing keys there are and where they came from: what mcpx doctor
// checks.
func (c *Checker) Probe(ctx context.Context) (keys int, from string, err error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	ks, _, err := c.keys.fetch(ctx)
	c.keys.mu.Lock()
	from = c.keys.url
	c.keys.mu.Unlock()
	return len(ks), from, err
}

// refresh fetches the keys after delay and ends the fetch under way.
func (s *keySet) refresh(ctx context.Context, delay time.Duration, done chan struct{}) {
	if delay > 0 {
		time.Sleep(delay)
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	keys, ttl, err := s.fetch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched, s.err = s.now(), err
	if err == nil {
		s.keys, s.expires = keys, s.now().Add(ttl)
	}
	s.fetching = nil
	close(done)
}

// fetch reads the JWK Set, from the issuer's metadata's jwks_uri unless
// the config gave its URL, and keeps its public signing keys.
func (s *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, time.Duration, error) {
	s.mu.Lock()
	u := s.url
	s.mu.Unlock()
	if u == "" {
		md, err := oauth.ServerMetadata(ctx, s.hc, s.issuer)
		if err != nil {
			return nil, 0, fmt.Errorf("the issuer's metadata: %w", err)
		}
		if md.JWKSURI == "" {
			return nil, 0, fmt.Errorf("the issuer %s publishes no jwks_uri: set http.oauth.jwksUrl", s.issuer)
		}
		if pu, err := url.Parse(md.JWKSURI); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") {
			return nil, 0, fmt.Errorf("the issuer's jwks_uri %q is not an http(s) URL", md.JWKSURI)
		}
		u = md.JWKSURI
		s.mu.Lock()
		s.url = u
		s.mu.Unlock()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("the issuer's keys at %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("the issuer's keys: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("the issuer's keys at %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeysBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("the issuer's keys at %s: %w", u, err)
	}
	if len(body) > maxKeysBytes {
		return nil, 0, fmt.Errorf("the issuer's keys at %s: over %d bytes", u, maxKeysBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, 0, fmt.Errorf("the issuer's keys at %s are not a JWK Set: %w", u, err)
	}
	var keys []jose.JSONWebKey
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		// Only the public half is needed; a set that carries private
		// keys by mistake does not make mcpx hold them.
		if pub := k.Public(); pub.Valid() {
			keys = append(keys, pub)
		}
	}
	if len(keys) == 0 {
		return nil, 0, fmt.Errorf("the issuer's keys at %s hold no public signing key", u)
	}
	return keys, keysTTL(resp.Header.Get("Cache-Control")), nil
}

// keysTTL is how long a key set may be used, from its Cache-Control.
func keysTTL(cc string) time.Duration {
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(strings.ToLower(d))
		if d == "no-store" || d == "no-cache" {
			return minKeysTTL
		}
		if v, ok := strings.CutPrefix(d, "max-age="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return min(max(time.Duration(n)*time.Second, minKeysTTL), maxKeysTTL)
			}
		}
	}
	return defaultKeysTTL
}

// match returns the key of ID kid, or every key when kid is "".
func match(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return keys
	}
	for _, k := range keys {
		if k.KeyID == kid {
			return []jose.JSONWebKey{k}
		}
	}
	return nil
}
