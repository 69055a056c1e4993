package search

import "sync"

// synonymGroups are words that people and tool descriptions use for the
// same thing; a query word finds the others in its group at a lower
// weight. They are the general vocabulary of tools (files, records,
// messages, the verbs that act on them), not any one server's.
var synonymGroups = [][]string{
	// Acting on things.
	{"create", "make", "new", "add", "generate", "build"},
	{"delete", "remove", "erase", "drop", "destroy", "discard", "purge", "forget", "unlink"},
	{"update", "modify", "edit", "change", "alter", "patch", "amend", "revise", "fix", "correct"},
	{"read", "get", "fetch", "retrieve", "open", "view", "load", "show", "display", "see", "look", "inspect", "examine"},
	{"write", "save", "store", "put", "persist", "record", "overwrite"},
	{"list", "enumerate", "browse", "index", "catalog"},
	{"search", "find", "query", "lookup", "locate", "seek", "discover", "grep", "match"},
	{"move", "rename", "relocate", "mv"},
	{"copy", "duplicate", "clone", "cp"},
	{"run", "execute", "launch", "start", "trigger", "invoke", "exec"},
	{"stop", "halt", "kill", "terminate", "cancel", "abort", "end"},
	{"send", "post", "submit", "deliver", "publish", "share"},
	{"download", "fetch", "pull"},
	{"upload", "attach", "push"},
	{"convert", "transform", "export", "translate"},
	{"compress", "zip", "gzip", "archive", "pack"},
	{"extract", "unzip", "decompress", "unpack"},
	{"summarize", "summary", "digest", "overview", "recap"},
	{"compare", "diff", "difference"},
	{"calculate", "compute", "sum", "add", "total", "plus", "count"},
	{"analyze", "analyse", "analysis", "evaluate", "assess", "inspect"},
	{"schedule", "book", "reserve", "plan"},
	{"toggle", "switch", "enable", "disable", "turn"},
	{"remember", "memorize", "memory", "recall", "note", "observation", "fact"},
	{"think", "reason", "reflect", "ponder", "thought", "thinking"},
	// Things acted on.
	{"file", "document", "doc"},
	{"folder", "directory", "dir"},
	{"path", "location", "filepath"},
	{"image", "picture", "photo", "pic", "img", "png", "jpg", "jpeg"},
	{"screenshot", "capture", "snapshot"},
	{"audio", "sound", "music", "song", "track", "mp3", "wav", "listen", "hear", "voice"},
	{"video", "movie", "film", "clip", "watch"},
	{"url", "link", "address", "href"},
	{"web", "website", "site", "webpage", "page", "internet", "online"},
	{"email", "mail", "inbox", "gmail"},
	{"message", "chat", "text", "sms"},
	{"weather", "forecast", "temperature", "climate"},
	{"map", "location", "place", "geocode", "coordinates", "address"},
	{"direction", "route", "navigate", "navigation"},
	{"news", "headline", "article", "story"},
	{"repository", "repo", "project"},
	{"issue", "bug", "ticket", "problem"},
	{"calendar", "event", "meeting", "appointment"},
	{"time", "date", "clock", "timezone"},
	{"stock", "share", "ticker", "equity"},
	{"price", "cost", "fee", "rate"},
	{"database", "db", "sql", "table"},
	{"user", "account", "profile", "member"},
	{"contact", "person", "people"},
	{"size", "bytes", "length"},
	{"info", "information", "metadata", "details", "detail", "stat", "stats", "properties"},
	{"environment", "env", "variable", "variables"},
	{"log", "logging", "logs"},
	{"tree", "hierarchy", "structure", "recursive"},
	{"content", "contents", "text", "body"},
	{"chart", "plot", "graph", "visualize", "diagram"},
	{"number", "numbers", "digit", "integer"},
	{"random", "sample", "shuffle"},
	{"translate", "translation", "language"},
	{"entity", "node", "object", "item"},
	{"relation", "relationship", "link", "connection", "edge"},
	{"pdf", "report"},
	{"spreadsheet", "excel", "csv", "sheet", "xlsx"},
	{"presentation", "slides", "powerpoint", "ppt", "deck"},
	{"word", "docx"},
	{"code", "source", "script", "program"},
	{"error", "failure", "exception", "crash"},
	{"notification", "alert", "notify", "reminder"},
	{"password", "credential", "secret", "token"},
	{"allow", "permit", "permission", "access", "authorize", "grant"},
	{"multiple", "several", "many", "batch", "bulk", "together", "simultaneous", "simultaneously"},
	{"entire", "whole", "all", "everything", "complete", "full"},
	{"knowledge", "know", "known", "fact", "information"},
	{"entity", "person", "people", "organization", "organisation"},
	{"size", "big", "bigger", "biggest", "large", "larger", "largest", "small", "smaller", "smallest", "huge", "tiny", "heavy"},
}

// impliedWords are words, most of them commands people type in a shell,
// that stand for other words without being their synonyms: mkdir means
// to create and a directory, but "create" does not mean "directory".
var impliedWords = map[string][]string{
	"cat":    {"read", "content", "file"},
	"ls":     {"list", "directory"},
	"dir":    {"list", "directory"},
	"mkdir":  {"create", "directory"},
	"rmdir":  {"delete", "directory"},
	"rm":     {"delete", "file"},
	"mv":     {"move", "rename"},
	"cp":     {"copy"},
	"grep":   {"search", "content"},
	"du":     {"size", "directory"},
	"df":     {"disk", "size"},
	"touch":  {"create", "file"},
	"head":   {"read", "first"},
	"tail":   {"read", "last"},
	"pwd":    {"current", "directory"},
	"chmod":  {"permission"},
	"stat":   {"info"},
	"wc":     {"count"},
	"curl":   {"fetch", "download", "url"},
	"wget":   {"fetch", "download", "url"},
	"inside": {"content"},
}

// synonymTable maps each stemmed word of synonymGroups to the other
// stemmed words of its groups, and each of impliedWords to the words it
// implies.
var synonymTable = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	stems := func(ws []string) []string {
		var out []string
		for _, w := range ws {
			words(w, nil, func(t string) { out = append(out, t) })
		}
		return out
	}
	link := func(from, to []string) {
		for _, s := range from {
			for _, o := range to {
				if o != s && !contains(m[s], o) {
					m[s] = append(m[s], o)
				}
			}
		}
	}
	for _, g := range synonymGroups {
		g := stems(g)
		link(g, g)
	}
	for w, implied := range impliedWords {
		link(stems([]string{w}), stems(implied))
	}
	return m
})

// synonyms returns the stemmed words that mean what the stemmed word w
// does.
func synonyms(w string) []string { return synonymTable()[w] }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
