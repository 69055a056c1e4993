package frame

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// escapeLine is a response of about size bytes whose result is one
// string made of escapes and nothing else (a text file read by a
// filesystem server is mostly "\n"), with its id last, as the TypeScript
// SDK writes it.
func escapeLine(size int) []byte {
	head, tail := `{"jsonrpc":"2.0","result":{"text":"`, `"},"id":42}`+"\n"
	unit := []byte(`\\\n`)
	body := bytes.Repeat(unit, max(size-len(head)-len(tail), 0)/len(unit))
	return append(append([]byte(head), body...), tail...)
}

// BenchmarkReaderOverLimitEscapes reads one escape-dense line twice the
// limit. Its time per byte stays the same from 1 MiB to 16 MiB: the skim
// of an over-limit line is linear whatever it holds.
func BenchmarkReaderOverLimitEscapes(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			line := escapeLine(size)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				_, err := NewReader(bytes.NewReader(line), int64(size/2)).Next()
				var tl *TooLongError
				if !errors.As(err, &tl) || string(tl.ID) != "42" {
					b.Fatalf("got %v, want a TooLongError for id 42", err)
				}
			}
		})
	}
}

// FuzzSkim: a skim fed a line in two pieces, jumping over strings, ends
// in the same state as one that follows every byte.
func FuzzSkim(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","result":{"text":"a\\b\"c\n"},"id":7}`,
		`{"id":"\"quoted\\\\","x":"\\\\\\\"\\"}`,
		`data: {"method":"x","params":"\\\\\\\\\\\\\\\\"}`,
		`{"a":"\\`, `{"a":"\\\\`, `{"a":"\"`, `{"id":[1,"\"]\\",{"b":"}"}],"r":""}`,
		string(escapeLine(300)),
	} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	// The second piece begins escaped ("\" ends the first), and a later
	// backslash escapes a quote.
	f.Add([]byte(`{"a":"\n\"","id":1}`), uint16(7))
	f.Fuzz(func(t *testing.T, line []byte, split uint16) {
		want := &skim{}
		for _, c := range line {
			want.byte(c)
		}
		k := int(split) % (len(line) + 1)
		got := &skim{}
		got.feed(line[:k])
		got.feed(line[k:])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("fed in pieces at %d: %+v\nbyte by byte: %+v", k, got, want)
		}
	})
}
