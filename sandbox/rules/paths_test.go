package rules

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// walk drives an intake with no demographics through the main-problem
// question to protocol p, answering every question so that none is skipped:
// age 30, sex female (so pregnancy is asked where relevant), "No" to every
// red flag except redFlagYes, and the first quick reply otherwise. It
// returns the transcript and the questions asked.
func walk(t *testing.T, e *Engine, p *Protocol, redFlagYes string) ([]turn, []string) {
	t.Helper()
	msgs := []string{"hello"}
	var tr []turn
	var asked []string
	for len(msgs) <= 20 {
		res, err := e.Evaluate(context.Background(), engine.Input{Patient: msgs})
		if err != nil {
			t.Fatal(err)
		}
		tr = append(tr, turn{Patient: msgs[len(msgs)-1], Result: res})
		if res.Terminal {
			return tr, asked
		}
		asked = append(asked, res.Reply)
		var next string
		switch {
		case len(msgs) == 1:
			next = p.Title
		case res.IntakeStatus == needsAge:
			next = "30"
		case res.IntakeStatus == needsSex:
			next = "Female"
		case res.IntakeStatus == needsRedFlags:
			next = "No"
			if redFlagYes != "" && strings.HasSuffix(res.Reply, p.redFlagAsk(redFlagYes)) {
				next = "Yes"
			}
		case len(res.Choices) > 0:
			next = res.Choices[0]
		default:
			t.Fatalf("no way to answer %q; transcript:\n%s", res.Reply, dump(tr))
		}
		msgs = append(msgs, next)
	}
	t.Fatalf("no terminal state after 20 turns:\n%s", dump(tr))
	return nil, nil
}

func (p *Protocol) redFlagAsk(fact string) string {
	for _, rf := range p.RedFlags {
		if rf.Fact == fact {
			return rf.Ask
		}
	}
	return "(no such red flag " + fact + ")"
}

func TestLongestPathIsAtMost15Turns(t *testing.T) {
	e := newEngine(t)
	for _, p := range e.lib.protocols {
		t.Run(p.ID, func(t *testing.T) {
			tr, asked := walk(t, e, p, "")
			// Every question of the protocol was asked, none skipped.
			want := []string{e.replies.AskMainProblem, e.replies.Age.Ask, e.replies.Sex.Ask}
			if p.PregnancyRelevant {
				want = append(want, e.replies.Pregnancy.Ask)
			}
			for _, rf := range p.RedFlags {
				want = append(want, rf.Ask)
			}
			for _, q := range p.Questions {
				want = append(want, q.Ask)
			}
			if len(asked) != len(want) {
				t.Fatalf("asked %d questions, want %d; transcript:\n%s", len(asked), len(want), dump(tr))
			}
			for i, w := range want {
				if !strings.HasSuffix(asked[i], w) {
					t.Errorf("question %d = %q, want it to end with %q", i+1, asked[i], w)
				}
			}
			res := last(tr)
			if len(tr) > 15 {
				t.Errorf("%d turns to a disposition, want at most 15", len(tr))
			}
			if !res.Terminal || res.Disposition == engine.DispositionContinue {
				t.Errorf("last turn not terminal: %+v", res)
			}
			if res.SafetyStatus != engine.SafetyCannotMissNegative {
				t.Errorf("safety_status %q, want cannot_miss_negative", res.SafetyStatus)
			}
			if (p.Score != nil) != (len(res.Scores) == 1) {
				t.Errorf("scores %+v for a protocol with score %v", res.Scores, p.Score != nil)
			}
			t.Logf("%s: %d turns", p.ID, len(tr))
		})
	}
}

func TestEveryRedFlagEscalates(t *testing.T) {
	e := newEngine(t)
	for _, p := range e.lib.protocols {
		for _, rf := range p.RedFlags {
			t.Run(p.ID+"/"+rf.Fact, func(t *testing.T) {
				tr, _ := walk(t, e, p, rf.Fact)
				res := last(tr)
				if !strings.HasSuffix(tr[len(tr)-2].Result.Reply, rf.Ask) {
					t.Fatalf("escalated after %q, not after the red flag question", tr[len(tr)-2].Result.Reply)
				}
				where := p.sameDayFlags[rf.Fact]
				if !res.Terminal || res.Urgent != (where == "") || res.Disposition != engine.DispositionEscalate ||
					res.SafetyStatus != engine.SafetyCannotMissPositive || res.IntakeStatus != engine.IntakeStatusComplete {
					t.Fatalf("got terminal=%v urgent=%v %s %s %s (same day %q)", res.Terminal, res.Urgent, res.Disposition, res.SafetyStatus, res.IntakeStatus, where)
				}
				if !slices.ContainsFunc(res.SafetyNotes, func(n string) bool { return strings.Contains(n, rf.SafetyNote) }) {
					t.Errorf("safety notes %q lack %q", res.SafetyNotes, rf.SafetyNote)
				}
				// The plan quotes exactly what the patient was told.
				plan := p.SOAP.Plan[engine.DispositionEscalate]
				if where == "" {
					if !strings.Contains(res.Reply, e.replies.UrgentCall) || res.DispositionLabel != e.replies.LabelUrgent {
						t.Errorf("reply %q (label %q) does not send the patient to emergency services", res.Reply, res.DispositionLabel)
					}
				} else {
					var say string
					say, plan = e.replies.sameDay(where)
					if !strings.Contains(res.Reply, say) || strings.Contains(res.Reply, e.replies.UrgentCall) || res.DispositionLabel != e.replies.LabelSameDay {
						t.Errorf("same-day reply %q (label %q) lacks %q or calls emergency services", res.Reply, res.DispositionLabel, say)
					}
					if !strings.Contains(res.Reply, "today") || !strings.Contains(res.Reply, "do not need an ambulance") {
						t.Errorf("same-day reply %q does not say today, without an ambulance", res.Reply)
					}
				}
				if res.SOAP.Plan != plan+" Patient was told: "+strconv.Quote(res.Reply) {
					t.Errorf("plan %q", res.SOAP.Plan)
				}
				if !strings.Contains(res.SOAP.Assessment, "Red flag POSITIVE: "+rf.Label) {
					t.Errorf("assessment %q lacks the positive red flag", res.SOAP.Assessment)
				}
			})
		}
	}
}

// Replies are patient-facing: no clinician note may leak into them.
func TestRepliesNeverCarryClinicianContent(t *testing.T) {
	e := newEngine(t)
	var clinical []string
	for _, p := range e.lib.protocols {
		for _, rf := range p.RedFlags {
			clinical = append(clinical, rf.SafetyNote)
		}
		for _, d := range p.Dispositions {
			clinical = append(clinical, d.Reason)
		}
		for _, plan := range p.SOAP.Plan {
			clinical = append(clinical, plan)
		}
	}
	for _, p := range e.lib.protocols {
		for _, flag := range append([]string{""}, p.RedFlags[0].Fact) {
			tr, _ := walk(t, e, p, flag)
			for _, x := range tr {
				for _, c := range clinical {
					if strings.Contains(x.Result.Reply, c) {
						t.Errorf("%s: reply %q contains clinician text %q", p.ID, x.Result.Reply, c)
					}
				}
				if strings.Contains(x.Result.Reply, "{") || strings.Contains(strings.ToLower(x.Result.Reply), "red flag") {
					t.Errorf("%s: reply %q is not plain patient text", p.ID, x.Result.Reply)
				}
			}
		}
	}
}
