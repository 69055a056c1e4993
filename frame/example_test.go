package frame_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpx/mcpx/frame"
)

// A Reader hands back one line at a time and refuses, by name, a line
// past its limit, then goes on with the next.
func ExampleReader() {
	r := frame.NewReader(strings.NewReader("{\"id\":1}\n"+strings.Repeat("x", 100)+"\n{\"id\":2}\n"), 64)
	for {
		line, err := r.Next()
		var tooLong *frame.TooLongError
		switch {
		case errors.As(err, &tooLong):
			fmt.Println("refused:", err)
			continue
		case err != nil:
			return
		}
		fmt.Printf("%s\n", line)
	}
	// Output:
	// {"id":1}
	// refused: message of 100 bytes is over the limit of 64 bytes (maxMessageBytes)
	// {"id":2}
}
