package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
)

// printTable writes rows with the same columns in two modes: for a person
// at a terminal, aligned columns under a bold header, cut to the
// terminal's width; for a pipe, tab-separated values, every cell whole.
func printTable(w io.Writer, tty bool, header []string, rows [][]string) error {
	width := 0
	if tty {
		width = terminalWidth(w)
	}
	return renderTable(w, width, header, rows, false)
}

// printWrappedTable is printTable for a table read for its last column
// (an argument's description): on a terminal that column is wrapped to
// the width instead of cut.
func printWrappedTable(w io.Writer, tty bool, header []string, rows [][]string) error {
	width := 0
	if tty {
		width = terminalWidth(w)
	}
	return renderTable(w, width, header, rows, true)
}

// defaultWidth is the width of a terminal whose size cannot be read.
const defaultWidth = 80

// terminalWidth is the width in columns of the terminal w writes to:
// its window size, else $COLUMNS, else 80.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		if cols, _, err := term.GetSize(f.Fd()); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}

// columnGap is the space between two columns of a terminal table.
const columnGap = 2

// minLast is the narrowest the last column is cut to before the others
// are.
const minLast = 20

// minColumn is the narrowest a column is cut to, so that a cut column
// still shows something of each cell.
const minColumn = 8

// renderTable writes the table for a terminal width columns wide, or for
// a pipe when width is 0. In a pipe each row is one line of tab-separated
// cells with no header, a cell's newlines and tabs escaped (\n, \t), so a
// script reads every cell whole. On a terminal each cell is one line; the
// widest columns are narrowed until the table fits, and a cell cut to its
// column ends in "…", or with wrapLast the last column's cells are
// wrapped onto more lines. No line has trailing spaces.
func renderTable(w io.Writer, width int, header []string, rows [][]string, wrapLast bool) error {
	// Cells hold text from upstreams (names, descriptions, errors): no
	// control character of theirs reaches the terminal, and none (a tab,
	// a newline) breaks a row.
	for _, r := range rows {
		for i := range r {
			r[i] = escapeControls(r[i], "")
		}
	}
	if width <= 0 {
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
	widths := fitColumns(columnWidths(header, rows), width)
	bold := lipgloss.NewStyle().Bold(true)
	var b strings.Builder
	last := len(widths) - 1
	line := func(cells []string, style func(string) string) {
		var l strings.Builder
		var more []string // the last cell's wrapped lines after the first
		for i, c := range cells {
			if i > last {
				break
			}
			if i == last && wrapLast {
				lines := strings.Split(ansi.Wrap(c, widths[i], " -/"), "\n")
				c, more = lines[0], lines[1:]
			}
			c = ansi.Truncate(c, widths[i], "…")
			pad := widths[i] - ansi.StringWidth(c)
			if i > 0 {
				l.WriteString(strings.Repeat(" ", columnGap))
			}
			l.WriteString(style(c))
			l.WriteString(strings.Repeat(" ", pad))
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
		indent := strings.Repeat(" ", ansi.StringWidth(l.String())-widths[last])
		for _, m := range more {
			b.WriteString(strings.TrimRight(indent+m, " "))
			b.WriteByte('\n')
		}
	}
	line(header, func(s string) string { return bold.Render(s) })
	for _, r := range rows {
		line(r, func(s string) string { return s })
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// columnWidths is each column's widest cell or header, in terminal cells.
func columnWidths(header []string, rows [][]string) []int {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = ansi.StringWidth(h)
	}
	for _, r := range rows {
		for i := 0; i < len(r) && i < len(widths); i++ {
			widths[i] = max(widths[i], ansi.StringWidth(r[i]))
		}
	}
	return widths
}

// fitColumns makes the columns and the gaps between them fit in width.
// Names in the first column matter most, descriptions in the last the
// least: first the last column is narrowed, down to minLast; then the
// widest of the others but the first, one cell at a time, down to
// minColumn; then the first. A table that still does not fit wraps at the
// terminal.
func fitColumns(widths []int, width int) []int {
	total := columnGap * (len(widths) - 1)
	for _, c := range widths {
		total += c
	}
	last := len(widths) - 1
	if last < 0 {
		return widths
	}
	if total > width {
		cut := min(total-width, max(widths[last]-minLast, 0))
		widths[last] -= cut
		total -= cut
	}
	for _, from := range []int{1, 0} {
		for total > width && from <= last {
			widest := from
			for i := from; i <= last; i++ {
				if widths[i] > widths[widest] {
					widest = i
				}
			}
			if widths[widest] <= minColumn {
				break
			}
			widths[widest]--
			total--
		}
	}
	return widths
}

// printJSON writes v indented, for scripts.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// firstLine is the first non-empty line of s, for a one-line column, with
// "…" after it when more text follows, so that nothing is cut silently.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	first, rest, more := strings.Cut(s, "\n")
	first = strings.TrimSpace(first)
	if more && strings.TrimSpace(rest) != "" {
		return first + " …"
	}
	return first
}
