package config

import "time"

// Results is the results key: the store of tool results cut by
// maxResultBytes, kept whole for their clients to read back. Zero fields
// take the store's defaults (64 MiB in memory, 1 GiB on disk, one hour).
// It is read when serve starts; a reload does not change it.
type Results struct {
	// MaxMemory bounds the bytes kept in memory; past it the least
	// recently used move to disk.
	MaxMemory int64
	// MaxDisk bounds the bytes kept on disk, in a private temporary
	// directory removed at exit. Negative ("off") keeps nothing on disk.
	MaxDisk int64
	// MaxAge is how long a result stays readable after it was made.
	MaxAge time.Duration
}

// minResultsMemory keeps maxMemory above one capped result's note.
const minResultsMemory = 64 << 10

// results reads the top-level results key.
func (p *parser) results(tree map[string]any) {
	v, ok := tree["results"]
	if !ok || v == nil {
		return
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		p.fail("", "results", "want an object, not "+kind(v))
		return
	}
	res := &p.cfg.Results
	r := &reader{p: p, prefix: "results.", m: m}
	if n, ok := r.size("maxMemory", minResultsMemory); ok {
		res.MaxMemory = n
	}
	if n, ok := r.sizeOrOff("maxDisk", minResultsMemory); ok {
		res.MaxDisk = n
		if n == 0 {
			res.MaxDisk = -1
		}
	}
	if d, ok := r.duration("maxAge", false); ok {
		res.MaxAge = d
	}
	r.warnUnknown("maxMemory", "maxDisk", "maxAge")
	if r.err != nil {
		p.errs = append(p.errs, r.err)
	}
}
