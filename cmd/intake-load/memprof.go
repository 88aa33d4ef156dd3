package main

import (
	"runtime"
	"runtime/metrics"
	"strings"
)

// Owners of heap and goroutines in this one process.
const (
	ownerApp      = "app (Fiber/fasthttp, web, bff, upstream client)"
	ownerSandbox  = "sandbox (net/http server and handler)"
	ownerBrowsers = "load's browsers (raw SSE clients)"
	ownerOther    = "other (runtime, unattributed)"
)

var owners = []string{ownerApp, ownerSandbox, ownerBrowsers, ownerOther}

type snapshot struct {
	ms         runtime.MemStats
	goroutines int
	heap       map[string]int64 // in-use bytes by owner (memory profile)
	gs         map[string]int   // goroutines by owner
	roots      map[string]int   // goroutines by owner and entry function
}

// takeSnapshot collects garbage and reads memory and goroutines. The memory
// profile lags up to two cycles behind, hence three collections.
func takeSnapshot() snapshot {
	for range 3 {
		runtime.GC()
	}
	var s snapshot
	runtime.ReadMemStats(&s.ms)
	s.goroutines = runtime.NumGoroutine()
	s.heap = heapByOwner()
	s.gs, s.roots = goroutinesByOwner()
	return s
}

func heapByOwner() map[string]int64 {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, false)
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, false); ok {
			recs = recs[:n]
			break
		}
	}
	out := map[string]int64{}
	for i := range recs {
		out[ownerOf(recs[i].Stack())] += recs[i].InUseBytes()
	}
	return out
}

// goroutinesByOwner counts goroutines by owner, and by owner and the
// function each goroutine started in.
func goroutinesByOwner() (map[string]int, map[string]int) {
	var recs []runtime.StackRecord
	n, _ := runtime.GoroutineProfile(nil)
	for {
		recs = make([]runtime.StackRecord, n+64)
		var ok bool
		if n, ok = runtime.GoroutineProfile(recs); ok {
			recs = recs[:n]
			break
		}
	}
	out, roots := map[string]int{}, map[string]int{}
	for i := range recs {
		o := ownerOf(recs[i].Stack())
		out[o]++
		roots[o+"\x00"+entryOf(recs[i].Stack())]++
	}
	return out, roots
}

// entryOf is the outermost function of a goroutine's stack.
func entryOf(stk []uintptr) string {
	frames := runtime.CallersFrames(stk)
	entry := "?"
	for {
		f, more := frames.Next()
		if f.Function != "runtime.goexit" && f.Function != "" {
			entry = f.Function
		}
		if !more {
			return entry
		}
	}
}

// The sandbox is the only net/http server in the process.
var sandboxPrefixes = []string{"net/http.(*conn)", "net/http.(*connReader)", "net/http.(*Server)", "net/http.(*response)", "net/http.(*chunkWriter)"}

var appPrefixes = []string{
	"github.com/clinical-intake/intake-web/web",
	"github.com/clinical-intake/intake-web/bff",
	"github.com/clinical-intake/intake-web/templates",
	"github.com/gofiber/", "github.com/valyala/", "github.com/alexedwards/", "github.com/a-h/templ",
	"modernc.org/", "database/sql",
	// The app's upstream client is the only net/http client with streams
	// open in the memory phase (the browsers use raw connections).
	"net/http.(*persistConn)", "net/http.(*Transport)", "net/http.(*Client)", "net/http.(*http2",
}

// ownerOf attributes a stack: any sandbox frame makes it the sandbox's (its
// handler runs under the load's recorder), then the load's own frames, then
// the app's packages.
func ownerOf(stk []uintptr) string {
	if len(stk) == 0 {
		return ownerOther
	}
	frames := runtime.CallersFrames(stk)
	isMain, isApp := false, false
	for {
		f, more := frames.Next()
		fn := f.Function
		switch {
		case strings.Contains(fn, "intake-web/sandbox"), hasAnyPrefix(fn, sandboxPrefixes):
			return ownerSandbox
		case strings.HasPrefix(fn, "main."):
			isMain = true
		case hasAnyPrefix(fn, appPrefixes):
			isApp = true
		}
		if !more {
			break
		}
	}
	switch {
	case isMain:
		return ownerBrowsers
	case isApp:
		return ownerApp
	}
	return ownerOther
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// goMemoryClasses reads what the Go runtime holds from the OS and has not
// released, and the part of it that is neither heap nor stacks.
func goMemoryClasses() (mapped, metadata uint64) {
	names := []string{"/memory/classes/total:bytes", "/memory/classes/heap/released:bytes",
		"/memory/classes/metadata/mcache/free:bytes", "/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/metadata/mspan/free:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/other:bytes", "/memory/classes/profiling/buckets:bytes",
		"/memory/classes/os-stacks:bytes", "/memory/classes/other:bytes"}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	mapped = v(0) - v(1)
	for i := 2; i < len(names); i++ {
		metadata += v(i)
	}
	return mapped, metadata
}
