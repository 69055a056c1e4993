package hidden_test

import (
	"fmt"

	"github.com/mcpx/mcpx/hidden"
)

// What a server says to the model loses what the model would read and a
// person would not see: zero-width and tag characters, bidi controls,
// terminal escapes (here one that conceals the text after it, which
// stays, now for both to read).
func ExampleString() {
	clean, removed := hidden.String("Reads a file.\u200b\U000E0049\U000E0067\u202e \x1b[8msecret\x1b[0m")
	fmt.Printf("%q %d\n", clean, removed)
	// Output: "Reads a file. secret" 12
}
