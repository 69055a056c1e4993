package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
)

// list is one of the four catalog lists: the method that fetches it and the
// result field that holds its items.
type list struct {
	method, field string
}

var (
	listTools     = list{"tools/list", "tools"}
	listResources = list{"resources/list", "resources"}
	listTemplates = list{"resources/templates/list", "resourceTemplates"}
	listPrompts   = list{"prompts/list", "prompts"}
)

// maxPages bounds pagination against a server whose cursors never end.
const maxPages = 10000

// listCatalog fetches every list the server declared a capability for.
// The lists are asked for together: a server far away answers them in one
// round trip instead of four, and a local one that starts slowly works
// on them at once.
func (cn *conn) listCatalog(ctx context.Context) (Catalog, error) {
	var cat Catalog
	lists := []struct {
		on       bool
		l        list
		items    *[]json.RawMessage
		optional bool // templates are younger than resources; some servers lack them
	}{
		{cn.caps.Tools != nil, listTools, &cat.Tools, false},
		{cn.caps.Resources != nil, listResources, &cat.Resources, false},
		{cn.caps.Resources != nil, listTemplates, &cat.ResourceTemplates, true},
		{cn.caps.Prompts != nil, listPrompts, &cat.Prompts, false},
	}
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i, x := range lists {
		if !x.on {
			continue
		}
		wg.Go(func() {
			items, err := cn.listAll(ctx, x.l)
			if err != nil && x.optional && isMethodNotFound(err) {
				err = nil
			}
			*x.items, errs[i] = items, err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return cat, err // the first in the lists' order: the others are most often the same
		}
	}
	return cat, nil
}

func isMethodNotFound(err error) bool {
	var rpc *RPCError
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound
}

// listAll follows nextCursor to the end and returns the items raw.
func (cn *conn) listAll(ctx context.Context, l list) ([]json.RawMessage, error) {
	var items []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		raw, err := cn.request(ctx, l.method, params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("%s: result is not a JSON object: %w", l.method, err)
		}
		var batch []json.RawMessage
		if v, ok := page[l.field]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, &batch); err != nil {
				return nil, fmt.Errorf("%s: %q is not an array: %w", l.method, l.field, err)
			}
		}
		for _, item := range batch {
			if len(item) == 0 || item[0] != '{' {
				return nil, fmt.Errorf("%s: an item of %q is not an object", l.method, l.field)
			}
		}
		items = append(items, batch...)
		cursor = ""
		if v, ok := page["nextCursor"]; ok {
			_ = json.Unmarshal(v, &cursor)
		}
		if cursor == "" {
			return items, nil
		}
		if seen[cursor] {
			return nil, fmt.Errorf("%s: server repeated cursor %q", l.method, cursor)
		}
		seen[cursor] = true
	}
	return nil, fmt.Errorf("%s: more than %d pages", l.method, maxPages)
}

// onNotification runs on the transport's reader goroutine: it must never
// call the server from here (the answer could only arrive through this very
// goroutine), so list changes are handed to a timer.
func (cn *conn) onNotification(n jsonrpc.Message) {
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		cn.markDirty(listTools)
	case string(mcp.MethodNotificationResourcesListChanged):
		cn.markDirty(listResources)
		cn.markDirty(listTemplates)
	case string(mcp.MethodNotificationPromptsListChanged):
		cn.markDirty(listPrompts)
	case string(mcp.MethodNotificationProgress):
		cn.relayProgress(n.Params)
	case string(mcp.MethodNotificationMessage), string(mcp.MethodNotificationResourceUpdated):
		cn.relayNotification(n)
	case methodSubscriptionsAcknowledged:
		cn.listen.acknowledged()
	}
}

func (cn *conn) markDirty(l list) {
	cn.dirtyMu.Lock()
	defer cn.dirtyMu.Unlock()
	if cn.closed {
		return
	}
	cn.dirty[l.method] = true
	if cn.timer == nil {
		cn.timer = time.AfterFunc(resyncDelay, cn.resync)
	}
}

// resync refetches the lists marked dirty and publishes them to the Client.
func (cn *conn) resync() {
	cn.syncMu.Lock()
	defer cn.syncMu.Unlock()
	cn.dirtyMu.Lock()
	dirty := cn.dirty
	cn.dirty = map[string]bool{}
	cn.timer = nil
	closed := cn.closed
	cn.dirtyMu.Unlock()
	if closed {
		return
	}

	c := cn.c
	timeout := c.timeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-cn.lost:
			cancel()
		case <-ctx.Done():
		}
	}()

	fetched := map[string][]json.RawMessage{}
	for _, l := range []list{listTools, listResources, listTemplates, listPrompts} {
		if !dirty[l.method] {
			continue
		}
		items, err := cn.listAll(ctx, l)
		if err != nil {
			if l == listTemplates && isMethodNotFound(err) {
				continue
			}
			if errors.Is(ctx.Err(), context.Canceled) {
				// The connection went away (the command ended, the
				// server exited): the next one lists everything anew.
				return
			}
			c.log.Warn("resync failed", "list", l.method, "err", c.opts.Redact(err.Error()))
			continue
		}
		fetched[l.method] = items
	}
	if len(fetched) == 0 {
		return
	}

	c.mu.Lock()
	if c.conn != cn {
		c.mu.Unlock()
		return
	}
	cat := c.catalog // copy: readers hold the old slices
	for method, items := range fetched {
		switch method {
		case listTools.method:
			cat.Tools = cn.checkTools(items)
		case listResources.method:
			cat.Resources = items
		case listTemplates.method:
			cat.ResourceTemplates = items
		case listPrompts.method:
			cat.Prompts = items
		}
	}
	c.catalog = cat
	c.countLocked()
	c.mu.Unlock()
	c.log.Debug("catalog resynced", "tools", len(cat.Tools), "resources", len(cat.Resources), "prompts", len(cat.Prompts))
	c.opts.OnChange(c)
	c.store(cn)
}
