package rules

import (
	"strings"
	"testing"
)

func TestNewLoadsLibrary(t *testing.T) {
	e := newEngine(t)
	id := e.Identity()
	if id.ProtocolCount != len(e.Protocols()) || id.ProtocolCount < 2 {
		t.Fatalf("protocol_count %d, protocols %v", id.ProtocolCount, e.Protocols())
	}
	for name, v := range map[string]string{"directory_hash": id.DirectoryHash, "prompt_hash": id.PromptHash} {
		if !strings.HasPrefix(v, "sha256:") || len(v) != len("sha256:")+64 {
			t.Errorf("%s = %q, want sha256:<64 hex>", name, v)
		}
	}
	if !strings.HasPrefix(id.ServerModel, "intake-rules-engine/") {
		t.Errorf("server_model = %q", id.ServerModel)
	}
}
