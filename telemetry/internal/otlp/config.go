package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Signal is what an exporter sends, as the OTEL_EXPORTER_OTLP_<SIGNAL>_*
// variables name it.
type Signal string

// The signals.
const (
	SignalTraces  Signal = "TRACES"
	SignalMetrics Signal = "METRICS"
)

// Protocols.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config is where and how one signal is exported.
type Config struct {
	Signal   Signal
	Protocol string // ProtocolHTTP or ProtocolGRPC
	// URL is where requests go: for http/protobuf the whole URL, for
	// grpc the scheme and host (the path is the service's method).
	URL     *url.URL
	Headers map[string]string
	Timeout time.Duration // of one request
	Gzip    bool
	TLS     *tls.Config // nil: the system's roots
	// Temporality and Histogram are the metrics' temporality preference
	// and default histogram aggregation, as the variables say ("": the
	// defaults, cumulative and explicit buckets).
	Temporality, Histogram string
	// Problems are settings that were ignored, to log.
	Problems []string
}

// Default collector ports, and the paths OTLP/HTTP adds to a base
// endpoint.
const (
	defaultHTTPPort = "4318"
	defaultGRPCPort = "4317"
	defaultTimeout  = 10 * time.Second
)

func signalPath(s Signal) string {
	if s == SignalMetrics {
		return "/v1/metrics"
	}
	return "/v1/traces"
}

// FromEnv reads a signal's export configuration for protocol from the
// OTEL_EXPORTER_OTLP_* variables, as OpenTelemetry's exporters read them:
// ENDPOINT (a base URL, to which http/protobuf adds /v1/traces or
// /v1/metrics) or the signal's own ENDPOINT (used as it is), HEADERS
// (k=v pairs, values URL-escaped), TIMEOUT (ms), COMPRESSION (gzip),
// CERTIFICATE, CLIENT_CERTIFICATE and CLIENT_KEY (files), INSECURE, each
// also per signal (which wins); and for metrics the TEMPORALITY_PREFERENCE
// and DEFAULT_HISTOGRAM_AGGREGATION. A setting that cannot be used is
// left out and said in Problems, as the exporters log it; only TLS
// settings that contradict an insecure endpoint are an error.
func FromEnv(getenv func(string) string, readFile func(string) ([]byte, error), signal Signal, protocol string) (Config, error) {
	c := Config{Signal: signal, Protocol: protocol, Timeout: defaultTimeout}
	get := func(key string) (string, bool) {
		v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + key))
		return v, v != ""
	}
	// Both the generic key and the signal's, the signal's last.
	each := func(key string, f func(name, v string)) {
		for _, k := range []string{key, string(signal) + "_" + key} {
			if v, ok := get(k); ok {
				f("OTEL_EXPORTER_OTLP_"+k, v)
			}
		}
	}
	port := defaultHTTPPort
	if protocol == ProtocolGRPC {
		port = defaultGRPCPort
	}
	c.URL = &url.URL{Scheme: "https", Host: "localhost:" + port}
	if protocol != ProtocolGRPC {
		c.URL.Path = signalPath(signal)
	}
	insecure := false
	each("ENDPOINT", func(name, v string) {
		u, err := url.Parse(v)
		if err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: %v", name, err))
			return
		}
		c.URL = endpoint(u, protocol, signal, !strings.Contains(name, string(signal)))
		insecure = strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "unix")
	})
	each("INSECURE", func(_, v string) { insecure = strings.EqualFold(v, "true") })
	each("HEADERS", func(name, v string) { c.Headers = headers(name, v, &c.Problems) })
	each("TIMEOUT", func(name, v string) {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("%s=%q is not a number of milliseconds", name, v))
			return
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	})
	each("COMPRESSION", func(_, v string) { c.Gzip = v == "gzip" })
	var tlsConf tls.Config
	each("CERTIFICATE", func(name, v string) {
		pem, err := readFile(v)
		if err == nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				err = errors.New("no PEM certificate in it")
			}
			tlsConf.RootCAs = pool
		}
		if err != nil {
			tlsConf.RootCAs = nil
			c.Problems = append(c.Problems, fmt.Sprintf("%s %s: %v", name, v, err))
		}
	})
	for _, prefix := range []string{"", string(signal) + "_"} {
		certFile, okc := get(prefix + "CLIENT_CERTIFICATE")
		keyFile, okk := get(prefix + "CLIENT_KEY")
		if !okc || !okk {
			continue
		}
		cert, err := readFile(certFile)
		var key []byte
		if err == nil {
			key, err = readFile(keyFile)
		}
		var pair tls.Certificate
		if err == nil {
			pair, err = tls.X509KeyPair(cert, key)
		}
		if err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("OTEL_EXPORTER_OTLP_%sCLIENT_CERTIFICATE: %v", prefix, err))
			continue
		}
		tlsConf.Certificates = []tls.Certificate{pair}
	}
	if tlsConf.RootCAs != nil || len(tlsConf.Certificates) > 0 {
		if insecure {
			return c, errors.New("telemetry: an insecure OTLP endpoint with TLS certificates set (OTEL_EXPORTER_OTLP_*CERTIFICATE)")
		}
		c.TLS = &tlsConf
	}
	if insecure {
		c.URL.Scheme = "http"
	} else {
		c.URL.Scheme = "https"
	}
	if signal == SignalMetrics {
		if v, ok := get("METRICS_TEMPORALITY_PREFERENCE"); ok {
			switch v = strings.ToLower(v); v {
			case "cumulative", "delta", "lowmemory":
				c.Temporality = v
			default:
				c.Problems = append(c.Problems, fmt.Sprintf("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=%q is not cumulative, delta or lowmemory: ignored", v))
			}
		}
		if v, ok := get("METRICS_DEFAULT_HISTOGRAM_AGGREGATION"); ok {
			switch v = strings.ToLower(v); v {
			case "explicit_bucket_histogram", "base2_exponential_bucket_histogram":
				c.Histogram = v
			default:
				c.Problems = append(c.Problems, fmt.Sprintf("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=%q: ignored", v))
			}
		}
	}
	return c, nil
}

// endpoint is where a signal goes given an ENDPOINT variable's URL: for
// http/protobuf a base URL (generic) gets the signal's path joined to
// its own, a signal's URL is used as it is (its path "/" when empty);
// grpc needs only the host.
func endpoint(u *url.URL, protocol string, signal Signal, generic bool) *url.URL {
	out := &url.URL{Scheme: u.Scheme, Host: u.Host}
	if protocol == ProtocolGRPC {
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
		case "":
			out.Host = path.Join(u.Host, u.Path)
		default:
			out.Host = u.String() // host:port, read as a scheme and its opaque part
		}
		return out
	}
	switch {
	case generic:
		out.Path = path.Join(u.Path, signalPath(signal))
	case u.Path == "":
		out.Path = "/"
	default:
		out.Path = u.Path
	}
	out.RawQuery = u.RawQuery
	return out
}

// headers parses k=v,k2=v2, each value URL-escaped.
func headers(name, v string, problems *[]string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderKey(k) {
			*problems = append(*problems, fmt.Sprintf("%s: a pair without a valid key= is left out", name))
			continue
		}
		unescaped, err := url.PathUnescape(val)
		if err != nil {
			*problems = append(*problems, fmt.Sprintf("%s: the value of %s is not URL-escaped text: left out", name, k))
			continue
		}
		out[k] = strings.TrimSpace(unescaped)
	}
	return out
}

func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if c > unicode.MaxASCII || !(unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
}
