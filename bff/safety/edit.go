package safety

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A hazard edited on a page: the hazard's fields as a form holds them, its
// controls as the YAML list the log file holds, and the log with the
// hazard in place, checked by the log's own rules (Validate).

// ParseControls reads a hazard's controls from YAML: the list under a
// hazard's "controls" in the log file. Empty text is no control. A fault
// is a *Problem naming its line (of this text) and field.
func ParseControls(text string) ([]Control, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, &Problem{Field: "controls", Message: "not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.SequenceNode {
		return nil, &Problem{Line: 1, Field: "controls", Message: "a list of controls (each starting with \"- id:\") is required"}
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var cs []Control
	if err := dec.Decode(&cs); err != nil {
		return nil, &Problem{Field: "controls", Message: strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  ")}
	}
	return cs, nil
}

// MarshalControls writes controls as ParseControls reads them.
func MarshalControls(cs []Control) (string, error) {
	if len(cs) == 0 {
		return "", nil
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(cs); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// WithHazard is a copy of the log with h in place of the hazard whose id
// is was ("" adds h after the others), checked by Validate. A fault of h
// is a *Problem whose Path is relative to the hazard ("" for its own
// fields, "controls[0].evidence[1]" below); false when was names no
// hazard.
func (l *Log) WithHazard(was string, h Hazard) (*Log, bool, error) {
	out := &Log{System: l.System, Hazards: slices.Clone(l.Hazards)}
	at := len(out.Hazards)
	if was == "" {
		out.Hazards = append(out.Hazards, h)
	} else {
		at = slices.IndexFunc(out.Hazards, func(x Hazard) bool { return x.ID == was })
		if at < 0 {
			return nil, false, nil
		}
		out.Hazards[at] = h
	}
	if err := out.Validate(); err != nil {
		p, ok := err.(*Problem)
		if !ok {
			return nil, true, err
		}
		mine := fmt.Sprintf("hazards[%d]", at)
		if p.Path == mine || strings.HasPrefix(p.Path, mine+".") {
			p.Path = strings.TrimPrefix(strings.TrimPrefix(p.Path, mine), ".")
			return nil, true, p
		}
		// Another hazard's fault: only a clash of ids can bring one
		// about (the others were valid before), reported on this one.
		if strings.Contains(p.Path, "controls") {
			return nil, true, &Problem{Field: "controls", Message: p.Message}
		}
		return nil, true, &Problem{Field: "id", Message: p.Message}
	}
	return out, true, nil
}
