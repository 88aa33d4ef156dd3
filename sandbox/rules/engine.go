// Package rules is the sandbox's deterministic clinical intake engine: a
// rules engine driven by the versioned protocol library embedded from
// protocols/. It is a synthetic research tool, never clinical advice.
//
// Evaluate is a pure function of engine.Input: every call replays the whole
// conversation from the first patient message, so the same messages always
// give the same reply and nothing is kept between calls.
package rules

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Version is the rules engine's own version, reported in server_model.
const Version = "1.8.0"

// Engine is the rules engine. It is safe for concurrent use: after New it
// is read-only.
type Engine struct {
	lx       *lexicon
	lib      *library
	replies  *replies
	identity engine.Identity
}

var _ engine.Engine = (*Engine)(nil)

// New loads and validates the embedded protocol library, in the plain
// voice.
func New() (*Engine, error) {
	return NewVoice(VoicePlain)
}

// NewVoice is New in the named voice (one of Voices()): the same decisions,
// worded by voices/<name>.json. An unknown name is an error that lists the
// voices.
func NewVoice(name string) (*Engine, error) {
	var overlay []byte
	var voice *voiceData
	if name != VoicePlain {
		var err error
		if overlay, voice, err = loadVoice(name); err != nil {
			return nil, err
		}
	}
	return buildEngine(name, overlay, voice)
}

// buildEngine loads the library and the replies, and overlays voice (nil for
// the plain voice), whose file is named and holds overlay.
func buildEngine(name string, overlay []byte, voice *voiceData) (*Engine, error) {
	lexData, err := fs.ReadFile(libraryFiles, lexiconFile)
	if err != nil {
		return nil, err
	}
	lx, err := loadLexicon(lexData)
	if err != nil {
		return nil, err
	}
	lib, err := loadLibrary(libraryFiles, lx)
	if err != nil {
		return nil, err
	}
	if len(lib.emergencies) == 0 {
		return nil, fmt.Errorf("rules: %s has no emergency categories", emergenciesFile)
	}
	r := defaultReplies()
	if err := r.prepare(lx); err != nil {
		return nil, fmt.Errorf("rules: built-in replies: %w", err)
	}
	profile := plainVoiceProfile
	promptHash, err := r.hash()
	if voice != nil {
		if err := applyVoice(voice, lx, lib, r); err != nil {
			return nil, fmt.Errorf("rules: voices/%s.json: %w", name, err)
		}
		profile = voice.VoiceProfile
		promptHash, err = voiceHash(r, overlay)
	}
	if err != nil {
		return nil, fmt.Errorf("rules: hashing replies: %w", err)
	}
	return &Engine{
		lx:      lx,
		lib:     lib,
		replies: r,
		identity: engine.Identity{
			ServerModel:    "intake-rules-engine/" + Version,
			PromptHash:     promptHash,
			DirectoryHash:  lib.hash,
			ProtocolCount:  len(lib.protocols),
			RuntimeProfile: "deterministic-rules",
			PromptProfile:  "reply-templates-en/1",
			VoiceProfile:   profile,
		},
	}, nil
}

// Evaluate implements engine.Engine. It never waits, so ctx is only checked
// on entry.
func (e *Engine) Evaluate(ctx context.Context, in engine.Input) (engine.Result, error) {
	if err := ctx.Err(); err != nil {
		return engine.Result{}, err
	}
	s := newSession(e, in)
	s.run()
	return s.result(), nil
}

// EmergencyCategories lists the emergency categories the conversation's
// first emergency named, in order of precedence (empty when it names
// none): what the recognition benchmark compares with a label's category.
func (e *Engine) EmergencyCategories(ctx context.Context, in engine.Input) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := newSession(e, in)
	s.run()
	var ids []string
	if s.emergency != nil {
		for _, c := range s.emergency.categories {
			ids = append(ids, c.ID)
		}
	}
	return ids, nil
}

// Identity implements engine.Engine.
func (e *Engine) Identity() engine.Identity {
	return e.identity
}

// Protocols lists the library's protocol ids, sorted.
func (e *Engine) Protocols() []string {
	ids := make([]string, 0, len(e.lib.protocols))
	for _, p := range e.lib.protocols {
		ids = append(ids, p.ID)
	}
	return ids
}
