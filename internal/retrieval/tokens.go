package retrieval

import (
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// o200k is the o200k_base encoding (GPT-4o's), loaded once: its tables
// take a moment to read.
var o200k = sync.OnceValues(func() (tokenizer.Codec, error) { return tokenizer.Get(tokenizer.O200kBase) })

// Tokens counts the tokens of s as a model reads it, with a real
// tokenizer (tiktoken's o200k_base, through github.com/tiktoken-go/tokenizer),
// not bytes/4.
func Tokens(tb testing.TB, s string) int {
	tb.Helper()
	enc, err := o200k()
	if err != nil {
		tb.Fatalf("o200k_base: %v", err)
	}
	n, err := enc.Count(s)
	if err != nil {
		tb.Fatalf("count tokens: %v", err)
	}
	return n
}
