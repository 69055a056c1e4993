package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// streams are the terminal streams a command reads and writes. Commands
// never touch os.Stdout directly, so tests can run them in process.
type streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	OutTTY bool // Out is a terminal: render tables for people
	ErrTTY bool // Err is a terminal: a waiting command may show a spinner there
	InTTY  bool // In is a terminal: a person typed the command, no client runs it
}

func systemStreams() *streams {
	return &streams{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
	}
}
