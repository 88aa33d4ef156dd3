package e2e

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestTransferSizes measures what the intake page costs a browser: a first
// visit (empty cache) and a second one (the same page opened again), as
// the bytes on the wire (CDP Network.loadingFinished encodedDataLength:
// headers and the body as sent, compressed or not) and the bodies' decoded
// sizes (response.body()). It only reports: run it with E2E_MEASURE=1
// (docs/benchmarks.md, "Transfer sizes").
func TestTransferSizes(t *testing.T) {
	if os.Getenv("E2E_MEASURE") == "" {
		t.Skip("a measurement, not a check: E2E_MEASURE=1 runs it")
	}
	a := startApp(t)
	page := newPage(t)
	startIntake(t, page, a)
	url := page.URL()

	cdp, err := page.Context().NewCDPSession(page)
	must(t, err, "open a CDP session")
	_, err = cdp.Send("Network.enable", nil)
	must(t, err, "Network.enable")
	_, err = cdp.Send("Network.clearBrowserCache", nil)
	must(t, err, "Network.clearBrowserCache")

	var mu sync.Mutex
	var wire float64
	var requests, fromCache int
	cdp.On("Network.loadingFinished", func(p map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		if n, ok := p["encodedDataLength"].(float64); ok {
			wire += n
		}
	})
	cdp.On("Network.requestServedFromCache", func(map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		fromCache++
	})
	var bodies int
	var names []string
	var responses []playwright.Response
	// Bodies are read after the visit: a call into the driver from inside
	// an event handler would wait on the handler's own dispatcher.
	page.OnResponse(func(r playwright.Response) {
		mu.Lock()
		defer mu.Unlock()
		responses = append(responses, r)
	})
	visit := func(name string) {
		mu.Lock()
		wire, bodies, requests, fromCache, names, responses = 0, 0, 0, 0, nil, nil
		mu.Unlock()
		_, err := page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateNetworkidle})
		must(t, err, "open the intake page")
		mu.Lock()
		rs := responses
		mu.Unlock()
		for _, r := range rs {
			b, err := r.Body()
			must(t, err, "read the body of %s", r.URL())
			mu.Lock()
			requests++
			bodies += len(b)
			names = append(names, fmt.Sprintf("%d %s %q %d bytes", r.Status(), r.URL(), r.Headers()["content-encoding"], len(b)))
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		t.Logf("%s visit: %d responses (%d from the memory/disk cache), bodies %d bytes decoded, %.0f bytes on the wire", name, requests, fromCache, bodies, wire)
		for _, n := range names {
			t.Logf("  %s", n)
		}
		fmt.Printf("TRANSFER %s: responses=%d cached=%d decoded=%d wire=%.0f\n", name, requests, fromCache, bodies, wire)
	}
	visit("first")
	visit("second")
}
