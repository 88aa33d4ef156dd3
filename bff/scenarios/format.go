package scenarios

import (
	_ "embed"
	"fmt"
	"strings"
)

// The suite format for people: the fields of a suite file with their
// rules, and an example. The clinician area's suite format page shows them
// and docs/scenarios.md has the same table and example (a test checks).

//go:embed example.yaml
var example string

// Example is a suite file of one vignette using every field.
func Example() string { return example }

// FieldHelp is one field of a suite file: its path ("facts[].concept"),
// its type, its rule and what it means. Rule and Meaning quote names of
// the format in backticks, as Markdown does.
type FieldHelp struct {
	Name, Type, Rule, Meaning string
}

// Fields are the fields of a suite file, in the order of the example.
func Fields() []FieldHelp {
	classes := make([]string, len(Classes))
	for i, c := range Classes {
		classes[i] = string(c)
	}
	return []FieldHelp{
		{"suite", "string", "optional", "the suite's name; default: the file's name without its extension"},
		{"vignettes", "list", fmt.Sprintf("required, 1 to %d per file", MaxVignettes), "the vignettes"},
		{"id", "string", "required, `[a-z0-9_-]{1,64}`, unique", "names the vignette in results, comparisons and idempotency keys"},
		{"title", "string", "optional", "one line for people"},
		{"age_years", "integer", fmt.Sprintf("optional, 0–%d", maxAge), "demographics given when the intake is created"},
		{"sex", "string", "optional: " + codes(strings.Split(sexes, ", ")), "demographics; `other` is sent as the start form's `intersex`"},
		{"history", "string", "optional", "demographics: allergies, medications, conditions"},
		{"neutral", "list", "optional, each `sex` (with `sex` female or male) or `age` (with `age_years` 18 or more)",
			"a clinician's judgement that swapping it does not change the right outcome: only then do the `sex_swap` and `age_swap` variations play the vignette"},
		{"opening", "string", fmt.Sprintf("required, at most %d,%03d characters", MaxOpeningChars/1000, MaxOpeningChars%1000), "the patient's first message"},
		{"complaint", "string", "optional", "the problem in the patient's words, restated to an open question (\"what is the main problem?\"); default: the opening"},
		{"facts[]", "list", "optional", "what the patient knows, in priority order"},
		{"facts[].concept", "string", "`concept` or `asks` required; an id of the concept vocabulary",
			"the concept the fact is about: it answers any question understood to ask about it, whatever its words"},
		{"facts[].asks", "list of strings", "`concept` or `asks` required, none empty",
			"the words of the questions the fact answers; a match by asks wins over concepts"},
		{"facts[].answer", "string", "`answer` or `choose` required", "what the patient says, in their own words; for a yes/no concept, starting with yes or no in the concept's polarity"},
		{"facts[].choose", "string", "`answer` or `choose` required", "the quick reply to pick: the first offered choice containing this text"},
		{"default", "string", "optional", "the answer to a question understood (a concept, or an ask without a usable answer) that no fact covers; default \"I'm not sure.\""},
		{"unknown", "string", "optional", "the answer to a question the patient cannot place at all (the result is then simulator-limited); default \"Sorry, I don't understand the question.\""},
		{"max_turns", "integer", fmt.Sprintf("0 or 1–%d (0 means %d)", MaxMaxTurns, DefaultMaxTurns), "the patient stops after this many messages, opening included"},
		{"gold.class", "string", "required: " + codes(classes), "where the patient should be sent"},
		{"gold.dispositions", "list", "optional, each " + codes(strings.Split(knownDispositions, ", ")), "dispositions accepted; empty: the class decides"},
		{"gold.red_flags_positive", "list of strings", "optional",
			"must be found positive: matched, case-insensitively, as text in the handoff's safety notes (red-flag labels, emergency categories)"},
		{"gold.red_flags_negative", "list of strings", "optional", "must not be found positive"},
		{"gold.protocol", "string", "optional", "the protocol id the engine should commit to; empty: not checked (an emergency in the opening ends before any protocol)"},
		{"gold.scores", "map", "optional, each band " + codes(strings.Split(bands, ", ")),
			"the band expected for each score the engine reports, by key (`centor_mcisaac`, `crb65`, `ottawa_ankle`, `uti_symptom_score`, `phq2`)"},
	}
}

// codes is names in backticks, the last after "or": "`a`, `b` or `c`".
func codes(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
