// Package testenv owns what mcpx's tests share for watching concurrent
// work: a [Buffer] safe for a logger's goroutines and the test's reads,
// and [Eventually], the one poll with a deadline.
//
//	var logs testenv.Buffer
//	logger := log.New(&logs)
//	...
//	testenv.Eventually(t, 5*time.Second, func() bool { return c.Status().State == upstream.StateConnected },
//		"not connected: %+v", c.Status())
package testenv
