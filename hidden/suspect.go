package hidden

import (
	"slices"
	"strings"
)

// aimedAtModel are phrases that, in a tool's description, speak to the
// model over the user's head: instructions to forget what it was told,
// to keep something from the user, or to fetch the user's secrets. They
// are flagged, never blocked: a legitimate tool may name ~/.ssh.
var aimedAtModel = []string{
	"ignore previous", "ignore all previous", "disregard previous", "forget previous",
	"<important>", "</important>", "do not tell the user", "don't tell the user",
	"do not mention", "without telling", "system prompt",
	"~/.ssh", ".ssh/", "id_rsa", "id_ed25519", "~/.aws", "~/.config", ".env", "mcp.json",
}

// Suspicious returns why a description looks aimed at the model rather
// than at the user who reads it: the phrases of aimedAtModel it holds,
// and the names in others (other servers' tools) it mentions. Each
// reason is short enough for a table.
func Suspicious(description string, others []string) []string {
	lower := strings.ToLower(description)
	var why []string
	for _, p := range aimedAtModel {
		if strings.Contains(lower, p) {
			why = append(why, "says "+strings.TrimSpace(p))
		}
	}
	for _, name := range others {
		if strings.Contains(description, name) {
			why = append(why, "mentions "+name+", another server's tool")
		}
	}
	return why
}

// Outlier reports whether a description of n bytes is far longer than
// its peers': four times their median and more than 2000 bytes, so that
// a server of short descriptions with one essay stands out.
func Outlier(n int, peers []int) bool {
	if n <= 2000 || len(peers) < 3 {
		return false
	}
	s := slices.Clone(peers)
	slices.Sort(s)
	return n > 4*s[len(s)/2]
}
