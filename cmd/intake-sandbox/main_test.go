package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVoiceFlag(t *testing.T) {
	getenv := func(string) string { return "" }
	var out, errOut bytes.Buffer
	if err := run([]string{"-h"}, &out, &errOut, getenv); err != nil {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(errOut.String(), "-voice") || !strings.Contains(errOut.String(), "plain, conversational") {
		t.Errorf("help does not list the voices:\n%s", errOut.String())
	}
	err := run([]string{"-voice", "chatty"}, &out, &errOut, getenv)
	if err == nil || !strings.Contains(err.Error(), "-voice") || !strings.Contains(err.Error(), "plain, conversational") {
		t.Fatalf("-voice chatty: %v, want an error naming the flag and the voices", err)
	}
}
