package aggregator

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpx/mcpx/config"
)

func TestRestartRefusesWhatDoesNotRun(t *testing.T) {
	a := New(&config.Config{}, nil)
	if err := a.Restart("files"); err == nil {
		t.Fatal("Restart before Start: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.Start(ctx)
	defer a.Close()
	if err := a.Restart("files"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Restart of an unknown server: %v, want ErrNotRunning", err)
	}
}
