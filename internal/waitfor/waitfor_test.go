package waitfor_test

import (
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/waitfor"
)

func TestClosed(t *testing.T) {
	done := make(chan struct{})
	if waitfor.Closed(done, time.Millisecond) {
		t.Error("an open channel was reported closed")
	}
	close(done)
	if !waitfor.Closed(done, time.Hour) {
		t.Error("a closed channel was not reported closed")
	}
}

func TestGroup(t *testing.T) {
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Go(func() { <-release })
	if waitfor.Group(&wg, time.Millisecond) {
		t.Error("a group still running was reported finished")
	}
	close(release)
	if !waitfor.Group(&wg, time.Hour) {
		t.Error("a finished group was not reported finished")
	}
}
