// Package pgtest gives tests a fresh PostgreSQL database each.
//
// The test command (scripts/test) starts one throwaway cluster for the whole
// run and exports its admin URL as INTAKE_TEST_DATABASE_URL; each test then
// gets its own database in it, dropped when the test ends. Without that
// variable (a bare "go test"), a test starts a cluster of its own with
// scripts/pg-cluster, which is slower but needs nothing else. A machine
// without PostgreSQL fails the test with what to run: a skip would hide the
// missing set-up.
package pgtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable holding a running cluster's admin URL.
const EnvURL = "INTAKE_TEST_DATABASE_URL"

// URL returns the URL of a new, empty database, dropped when tb ends.
func URL(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		admin = startCluster(tb)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("pgtest: connect to %s: %v", redact(admin), err)
	}
	defer conn.Close(ctx)
	name := "t_" + randomHex(8)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("pgtest: connect to drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// startCluster runs scripts/pg-cluster for this test alone.
func startCluster(tb testing.TB) string {
	tb.Helper()
	script := filepath.Join(moduleRoot(tb), "scripts", "pg-cluster")
	// Not tb.TempDir: the cluster's owner must be able to reach it.
	dir := filepath.Join(os.TempDir(), "intake-pgtest-"+randomHex(6))
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		tb.Fatalf("pgtest: no PostgreSQL for this test (%v): %s\nRun the tests with scripts/test, which installs and starts one, or set %s.", err, bytes.TrimSpace(stderr), EnvURL)
	}
	tb.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), EnvURL+"="); ok {
			return v
		}
	}
	tb.Fatalf("pgtest: %s printed no %s", script, EnvURL)
	return ""
}

func moduleRoot(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("pgtest: cannot locate the module")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
