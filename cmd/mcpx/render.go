package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
)

// printTable writes rows with the same columns in two modes: an aligned,
// styled table for a person at a terminal, tab-separated values for a pipe.
func printTable(w io.Writer, tty bool, header []string, rows [][]string) error {
	// Cells hold text from upstreams (names, descriptions, errors): no
	// control character of theirs reaches the terminal, and none (a tab,
	// a newline) breaks a row.
	for _, r := range rows {
		for i := range r {
			r[i] = escapeControls(r[i], "")
		}
	}
	if !tty {
		for _, r := range rows {
			if _, err := fmt.Fprintln(w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		return nil
	}
	bold := lipgloss.NewStyle().Bold(true).PaddingRight(2)
	cell := lipgloss.NewStyle().PaddingRight(2)
	t := table.New().
		Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).
		Headers(header...).
		Rows(rows...).
		StyleFunc(func(row, _ int) lipgloss.Style {
			if row == table.HeaderRow {
				return bold
			}
			return cell
		})
	_, err := fmt.Fprintln(w, t.Render())
	return err
}

// printJSON writes v indented, for scripts.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// firstLine is the first non-empty line of s, for a one-line column.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// truncate shortens s to n runes for a terminal column.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
