package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository, seen from this package's directory.
const repoRoot = "../.."

// maxReadmeLines keeps the README a page or two; the rest is in docs/.
const maxReadmeLines = 300

// TestReadmeLength holds the README to a page or two: whatever does not fit
// belongs in docs/.
func TestReadmeLength(t *testing.T) {
	lines := strings.Count(readDoc(t, "README.md"), "\n")
	if lines > maxReadmeLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail to docs/", lines, maxReadmeLines)
	}
}

// TestReadmeFirstCommands checks the fenced block right under the README's
// title: one command that runs mcpx's main job from a fresh clone, and one
// that runs the tests, both naming files that exist.
func TestReadmeFirstCommands(t *testing.T) {
	cmds := firstFence(t, readDoc(t, "README.md"))
	if len(cmds) != 2 {
		t.Fatalf("the README's first fenced block holds %d commands, want 2 (run mcpx, run the tests): %q", len(cmds), cmds)
	}
	run := strings.Fields(cmds[0])
	if len(run) < 3 || run[0] != "go" || run[1] != "run" || run[2] != "./cmd/mcpx" {
		t.Errorf("the first command is %q, want `go run ./cmd/mcpx ...`", cmds[0])
	}
	for i, f := range run {
		if f == "--config" && i+1 < len(run) {
			if _, err := os.Stat(filepath.Join(repoRoot, run[i+1])); err != nil {
				t.Errorf("the first command's config: %v", err)
			}
		}
	}
	if cmds[1] != "scripts/test" {
		t.Errorf("the second command is %q, want scripts/test", cmds[1])
	}
	if fi, err := os.Stat(filepath.Join(repoRoot, "scripts", "test")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/test is not an executable file (%v)", err)
	}
}

// firstFence returns the command lines of the fenced block that must follow
// the README's title, with nothing but blank lines between them.
func firstFence(t *testing.T, text string) []string {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# ") {
		t.Fatalf("README.md does not begin with a title line")
	}
	i := 1
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || !strings.HasPrefix(lines[i], "```") {
		t.Fatalf("README.md: the first thing after the title must be a fenced block of commands")
	}
	var cmds []string
	for i++; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "```") {
			return cmds
		}
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	t.Fatalf("README.md: the first fenced block is never closed")
	return nil
}

// TestDocLinks checks every relative link of README.md and docs/*.md: the
// file it names exists, and a #fragment names a heading of the target (as
// GitHub makes anchors of headings).
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatalf("no docs/*.md")
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	for _, file := range files {
		for _, link := range markdownLinks(readDoc(t, file)) {
			if err := checkLink(t, file, link); err != nil {
				t.Errorf("%s: link %q: %v", file, link, err)
			}
		}
	}
}

// checkLink resolves one link target written in file (relative to the
// repository root).
func checkLink(t *testing.T, file, link string) error {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return nil // not a relative link
	}
	path, frag, _ := strings.Cut(link, "#")
	target := file
	if path != "" {
		target = filepath.Join(filepath.Dir(file), path)
	}
	fi, err := os.Stat(filepath.Join(repoRoot, target))
	if err != nil {
		return fmt.Errorf("no such file %s", filepath.ToSlash(target))
	}
	if frag == "" {
		return nil
	}
	if fi.IsDir() || !strings.HasSuffix(target, ".md") {
		return fmt.Errorf("an anchor on %s, which is not a markdown file", filepath.ToSlash(target))
	}
	if !headingAnchors(readDoc(t, target))[frag] {
		return fmt.Errorf("%s has no heading with the anchor #%s", filepath.ToSlash(target), frag)
	}
	return nil
}

var (
	// linkRE matches an inline link or image, [text](target "title").
	linkRE = regexp.MustCompile(`\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// codeSpanRE matches inline code, where brackets are not links.
	codeSpanRE = regexp.MustCompile("`[^`\n]*`")
)

// markdownLinks returns the link targets of text outside code. A link's
// text may run over a line break.
func markdownLinks(text string) []string {
	prose := codeSpanRE.ReplaceAllString(strings.Join(proseLines(text), "\n"), "")
	var links []string
	for _, m := range linkRE.FindAllStringSubmatch(prose, -1) {
		links = append(links, m[1])
	}
	return links
}

func TestMarkdownLinks(t *testing.T) {
	text := "See [the `proxy`\ntool](docs/proxy-tool.md) and [x](a.md#b \"title\").\n" +
		"`[not](code.md)`\n```\n[not](fenced.md)\n```\n![img](pic.png)\n"
	got := markdownLinks(text)
	want := []string{"docs/proxy-tool.md", "a.md#b", "pic.png"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("markdownLinks = %q, want %q", got, want)
	}
}

// proseLines returns the lines of text that are not inside a fenced block.
func proseLines(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of text:
// lowercased, punctuation dropped, spaces made hyphens, and a repeated
// anchor numbered -1, -2, ... in order.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		title, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		title = strings.TrimLeft(title, "#")
		if title == "" || title[0] != ' ' {
			continue
		}
		slug := slugify(strings.TrimSpace(title))
		a := slug
		if n := seen[slug]; n > 0 {
			a = fmt.Sprintf("%s-%d", slug, n)
		}
		seen[slug]++
		anchors[a] = true
	}
	return anchors
}

func slugify(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlugify(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"Remote servers that need a login", "remote-servers-that-need-a-login"},
		{"One mcpx for every client: `serve --http`", "one-mcpx-for-every-client-serve---http"},
		{"The `proxy` tool", "the-proxy-tool"},
		{"Fast start, sleeping servers", "fast-start-sleeping-servers"},
		{"What the snapshot shows, and result limits", "what-the-snapshot-shows-and-result-limits"},
		{"browser_snapshot & maxImageBytes", "browser_snapshot--maximagebytes"},
	} {
		if got := slugify(tc.title); got != tc.want {
			t.Errorf("slugify(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
	got := headingAnchors("# A\n## A\n```\n# A\n```\n### A\n")
	for _, want := range []string{"a", "a-1", "a-2"} {
		if !got[want] {
			t.Errorf("headingAnchors: no %q in %v", want, got)
		}
	}
	if got["a-3"] {
		t.Errorf("headingAnchors counted a heading inside a fenced block: %v", got)
	}
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
