package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/proxytool"
)

type readOptions struct {
	uri  string
	out  string // -o FILE
	json bool
}

func newReadCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &readOptions{}
	cmd := &cobra.Command{
		Use:   "read <URI | name | title>",
		Short: "Read a resource: text to stdout, binary to a file",
		Long: `Read one resource by URI (a URI a template matches too), or by its name or
title as mcpx list resources shows them, and print its text; an unknown
one is an error naming the closest ones (exit status 2). Binary contents
(blobs) are written, decoded, to the file -o names; without -o mcpx says
what it is and exits 2. -o writes text contents there too. --json prints
the raw ReadResourceResult.`,
		Example: "  mcpx read demo://resource/static/document/features.md\n" +
			"  mcpx read demo://resource/dynamic/blob/1 -o blob.bin\n  mcpx read file:///etc/hosts --json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.uri = args[0]
			s, err := openFor(cmd.Context(), ios, g, func(a *aggregator.Aggregator) ([]string, bool) {
				return a.Owners(o.uri, proxytool.KindResource)
			})
			if err != nil {
				return err
			}
			defer s.close()
			c := s.agg.Catalog()
			uri := o.uri
			e, err := c.Find(proxytool.KindResource, o.uri)
			switch {
			case err == nil && e.Kind != aggregator.KindTemplate:
				uri = e.Name
			case err == nil:
				// A URI a template matches is read as it is; the
				// template's own name or title is no URI to read.
				if _, ok := c.Resource(o.uri); !ok {
					return usagef("%q is the resource template %s: give a URI it matches", o.uri, e.Name)
				}
			default:
				if _, err := findEntry(c, proxytool.KindResource, o.uri); err != nil {
					return err
				}
			}
			res, err := s.agg.ReadResource(cmd.Context(), uri)
			if err != nil {
				return fmt.Errorf("read %s: %w", o.uri, err)
			}
			return readRender(ios, res, o)
		},
	}
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "write the contents, binary ones decoded, to this file")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the raw ReadResourceResult")
	return cmd
}

// resourceContents is one item of a ReadResourceResult.
type resourceContents struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

func readRender(ios *streams, raw json.RawMessage, o *readOptions) error {
	if o.json {
		return printJSON(ios.Out, raw)
	}
	var res struct {
		Contents []resourceContents `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("read %s: the result is not a ReadResourceResult: %w", o.uri, err)
	}
	var data []byte
	for _, c := range res.Contents {
		switch {
		case c.Text != nil:
			data = append(data, *c.Text...)
		case c.Blob != nil:
			b, err := base64.StdEncoding.DecodeString(*c.Blob)
			if err != nil {
				return fmt.Errorf("read %s: the blob of %s is not base64: %w", o.uri, c.URI, err)
			}
			if o.out == "" {
				return usagef("%s is binary (%s, %s): give -o FILE to write it", c.URI, orUnknown(c.MimeType), size(len(b)))
			}
			data = append(data, b...)
		}
	}
	if o.out == "" {
		_, err := ios.Out.Write(data)
		if err == nil && len(data) > 0 && data[len(data)-1] != '\n' {
			_, err = fmt.Fprintln(ios.Out)
		}
		return err
	}
	if len(res.Contents) > 1 {
		fmt.Fprintf(ios.Err, "mcpx: %d contents, written one after the other\n", len(res.Contents))
	}
	if err := os.WriteFile(o.out, data, 0o644); err != nil {
		return fmt.Errorf("read %s: %w", o.uri, err)
	}
	return nil
}

func orUnknown(mime string) string {
	if mime == "" {
		return "no MIME type"
	}
	return mime
}

type getOptions struct {
	name string
	args []string // k=v
	json bool
}

func newGetCmd(ios *streams, g *globalFlags) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get <name | title> [--arg key=value ...]",
		Short: "Get a prompt's messages",
		Long: `Get one prompt, with its arguments given as --arg key=value, and print its
messages: each one's role, then its content (text as text; images, audio
and resources as a line with their type and size). The prompt is found by
its exposed name, its server's own name for it (when only one server has
that), or its title; an unknown one is an error naming the closest ones
(exit status 2). --json prints the raw GetPromptResult.`,
		Example: "  mcpx get everything_simple-prompt\n  mcpx get args-prompt --arg city=Paris --arg state=Texas",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			params, err := promptParams(o.args)
			if err != nil {
				return err
			}
			s, err := openFor(cmd.Context(), ios, g, func(a *aggregator.Aggregator) ([]string, bool) {
				return a.Owners(o.name, proxytool.KindPrompt)
			})
			if err != nil {
				return err
			}
			defer s.close()
			e, err := findEntry(s.agg.Catalog(), proxytool.KindPrompt, o.name)
			if err != nil {
				return err
			}
			var missing []string
			for _, a := range promptArgs(e.JSON) {
				if _, ok := params[a.Name]; a.Required && !ok {
					missing = append(missing, a.Name)
				}
			}
			if len(missing) > 0 {
				return usagef("prompt %s needs --arg %s=... (`mcpx info %s` describes its arguments)", e.Name, strings.Join(missing, "=... --arg "), e.Name)
			}
			res, err := s.agg.GetPrompt(cmd.Context(), e.Name, params)
			if err != nil {
				return fmt.Errorf("get %s: %w", o.name, err)
			}
			return getRender(ios, res, o.json)
		},
	}
	cmd.Flags().StringArrayVar(&o.args, "arg", nil, "a prompt argument as key=value (repeat for more)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the raw GetPromptResult")
	return cmd
}

// promptParams reads --arg key=value flags; nil when there are none.
func promptParams(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, usagef("--arg %q: want key=value", a)
		}
		m[k] = v
	}
	return m, nil
}

func getRender(ios *streams, raw json.RawMessage, asJSON bool) error {
	if asJSON {
		return printJSON(ios.Out, raw)
	}
	var res struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("the result is not a GetPromptResult: %w", err)
	}
	for i, m := range res.Messages {
		if i > 0 {
			fmt.Fprintln(ios.Out)
		}
		fmt.Fprintf(ios.Out, "%s:\n%s\n", escapeControls(m.Role, ""), renderItem(m.Content))
	}
	return nil
}
