package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/proxytool"
)

type callOptions struct {
	name     string
	args     string // JSON text, or "-" for stdin
	argsFile string
	json     bool
	timeout  time.Duration
	maxBytes int // --max-bytes: 0 prints the result whole
}

func newCallCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &callOptions{}
	var serverURL string
	cmd := &cobra.Command{
		Use:   "call <tool> ['<json args>' | -]",
		Short: "Call one tool by its exposed name (or its server's own name for it)",
		Long: `Call one tool and print its result: text as text, images, audio and blobs
as a line with their type and size. --json prints the raw CallToolResult.
The name is found as the proxy tool finds it: the exposed name, or the
server's own name (echo for everything_echo) when only one server has it;
an unknown name is an error naming the closest ones (exit status 2).
The exit status is 1 when the call fails or the tool reports an error
(isError).`,
		Example: "  mcpx call everything_echo '{\"message\":\"hi\"}'\n" +
			"  echo '{\"a\":1,\"b\":2}' | mcpx call everything_get-sum -\n" +
			"  mcpx call everything_echo --args-file args.json --json",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if len(args) == 2 {
				o.args = args[1]
			}
			raw, err := readArgs(ios, o)
			if err != nil {
				return exitWith(ios, 2, err)
			}
			ctx := cmd.Context()
			if r := remoteFor(serverURL); r != nil {
				if o.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, o.timeout)
					defer cancel()
				}
				res, err := r.call(ctx, o.name, raw)
				if err != nil {
					return fmt.Errorf("call %s: %w", o.name, err)
				}
				return callRender(ios, cutResult(res, o.maxBytes), o.json)
			}
			// Only the server that owns the name is started.
			s, err := openFor(cmd.Context(), ios, g, func(a *aggregator.Aggregator) ([]string, bool) {
				return a.Owners(o.name, proxytool.KindTool)
			})
			if err != nil {
				return err
			}
			defer s.close()
			if o.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("no answer within --timeout %s", o.timeout))
				defer cancel()
			}
			name, err := toolName(s.agg.Catalog(), o.name)
			if err != nil {
				return err
			}
			res, err := s.agg.CallTool(ctx, name, raw)
			var filtered *aggregator.Filtered
			if errors.As(err, &filtered) {
				// Which config filter keeps it out says it all.
				return usageError{fmt.Errorf("call %s: %w", o.name, err)}
			}
			if errors.Is(err, aggregator.ErrUnknown) {
				// Not in the catalog after the wait either (a server
				// waiting for a login says so).
				return usageError{fmt.Errorf("call %s: %w%s", o.name, err, didYouMean(s.agg.Catalog(), proxytool.KindTool, o.name))}
			}
			if err != nil {
				if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
					err = cause
				}
				return fmt.Errorf("call %s: %w", o.name, err)
			}
			return callRender(ios, cutResult(res, o.maxBytes), o.json)
		},
	}
	cmd.Flags().StringVar(&o.argsFile, "args-file", "", "read the arguments (a JSON object) from this file")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the raw CallToolResult")
	cmd.Flags().IntVar(&o.maxBytes, "max-bytes", 0, "cut the result's text at a line boundary within this many bytes (default: print it whole)")
	addServerURL(cmd, &serverURL)
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "give up on the call after this long (default: the server's callTimeout and maxCallTime)")
	return cmd
}

// toolName is the exposed name of the tool name stands for, resolved as
// the proxy tool resolves it (an original name such as "echo" finds
// everything_echo when only one server has it). A name the catalog does
// not know yet is passed on as it is: the call may wait for a server
// still connecting, or say that one waits for a login.
func toolName(c *aggregator.Catalog, name string) (string, error) {
	e, err := c.Find(proxytool.KindTool, name)
	switch {
	case err == nil:
		return e.Name, nil
	case errors.Is(err, proxytool.ErrNotFound):
		return name, nil
	default:
		return "", ambiguous(proxytool.KindTool, name, err)
	}
}

// readArgs returns the arguments object from the command line, a file or
// stdin, and checks that it is a JSON object.
func readArgs(ios *streams, o *callOptions) (json.RawMessage, error) {
	var data []byte
	var from string
	switch {
	case o.argsFile != "" && o.args != "":
		return nil, errors.New("give the arguments either inline or with --args-file, not both")
	case o.argsFile != "":
		b, err := os.ReadFile(o.argsFile)
		if err != nil {
			return nil, fmt.Errorf("--args-file: %w", err)
		}
		data, from = b, o.argsFile
	case o.args == "-":
		in := ios.In
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("read arguments from stdin: %w", err)
		}
		data, from = b, "stdin"
	case o.args != "":
		data, from = []byte(o.args), "arguments"
	default:
		return json.RawMessage(`{}`), nil
	}
	if strings.TrimSpace(string(data)) == "" {
		return json.RawMessage(`{}`), nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %w", from, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("%s: must be a JSON object like {\"key\": \"value\"}, got %s", from, jsonKind(v))
	}
	return json.RawMessage(data), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	}
	return "something else"
}

// cutResult cuts the text of a result over maxBytes, as serve does for
// its clients but keeping nothing: the note says what was cut. 0 keeps it
// whole; a result that cannot be cut is printed as it came.
func cutResult(raw json.RawMessage, maxBytes int) json.RawMessage {
	if maxBytes <= 0 || len(raw) <= maxBytes {
		return raw
	}
	cut, err := results.Cut(nil, "", raw, maxBytes, results.ViaRead) // nothing kept: no way to read named
	if err != nil {
		return raw
	}
	return cut
}

// callResult is the part of a CallToolResult that rendering needs.
type callResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
}

type contentItem struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     string  `json:"blob"`
	} `json:"resource"`
}

// callRender prints a result for a person, or raw with --json. isError
// turns into exit status 1 after the output is printed.
func callRender(ios *streams, raw json.RawMessage, asJSON bool) error {
	var res callResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("result is not a CallToolResult: %w", err)
	}
	if asJSON {
		if err := printJSON(ios.Out, raw); err != nil {
			return err
		}
	} else {
		for _, c := range res.Content {
			fmt.Fprintln(ios.Out, renderItem(c))
		}
		if len(res.Content) == 0 && len(res.StructuredContent) > 0 {
			printJSON(ios.Out, res.StructuredContent)
		}
	}
	if res.IsError {
		fmt.Fprintln(ios.Err, "mcpx: the tool reported an error")
		return exitError{1}
	}
	return nil
}

func renderItem(raw json.RawMessage) string {
	var c contentItem
	if err := json.Unmarshal(raw, &c); err != nil {
		return string(raw)
	}
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %s]", c.Type, c.MimeType, size(base64Len(c.Data)))
	case "resource_link":
		return fmt.Sprintf("[resource link %s %s]", c.URI, c.Name)
	case "resource":
		if c.Resource == nil {
			return "[resource]"
		}
		if c.Resource.Text != nil {
			return fmt.Sprintf("[resource %s %s]\n%s", c.Resource.URI, c.Resource.MimeType, *c.Resource.Text)
		}
		return fmt.Sprintf("[resource %s %s, %s]", c.Resource.URI, c.Resource.MimeType, size(base64Len(c.Resource.Blob)))
	default:
		return string(raw)
	}
}

// base64Len is the decoded size of base64 data, estimated if it is not
// valid base64.
func base64Len(s string) int {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return len(b)
	}
	return base64.StdEncoding.DecodedLen(len(s))
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
