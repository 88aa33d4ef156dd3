package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"strings"

	"github.com/clinical-intake/intake-web/static"
)

var lookPath = exec.LookPath

// printPDF prints page (HTML that links the app's /static/ assets) to out
// with headless Chromium's print to PDF: page and assets are served on a
// loopback port of this process for as long as Chromium reads them.
func printPDF(ctx context.Context, chromium string, page []byte, out string) error {
	exe, err := findChromium(chromium)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve the report to Chromium: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/report", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("/static/", func(w http.ResponseWriter, r *http.Request) {
		a, _, ok := static.Lookup(strings.TrimPrefix(r.URL.Path, "/static/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		if t := map[string]string{".css": "text/css", ".js": "text/javascript"}[path.Ext(a.Name)]; t != "" {
			w.Header().Set("Content-Type", t)
		}
		_, _ = w.Write(a.Data)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	profile, err := os.MkdirTemp("", "intake-web-pdf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	abs := out
	if !strings.HasPrefix(abs, "/") {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		abs = wd + "/" + out
	}
	_ = os.Remove(abs) // so a file left by an earlier run is not taken for this one's
	cmd := exec.CommandContext(ctx, exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+profile,
		"--no-pdf-header-footer", "--print-to-pdf="+abs, "http://"+ln.Addr().String()+"/report")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s could not print the PDF: %w\n%s", exe, err, lastLines(stderr.String(), 5))
	}
	if fi, err := os.Stat(abs); err != nil || fi.Size() == 0 {
		return errors.Join(fmt.Errorf("%s wrote no PDF to %s:\n%s", exe, abs, lastLines(stderr.String(), 5)), err)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
