package rules

import (
	"strconv"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Words of advice a plan might claim; each must be in what the patient was
// actually told whenever the plan uses it.
var adviceWords = []string{"paracetamol", "ibuprofen", "fluids", "drive", "crisis", "alone", "antihistamine",
	"inhaler", "ice", "heat", "gargle", "nil by mouth", "elevat", "active"}

// checkPlanHonest fails when the plan's own text (before the quote of the
// reply) names advice the reply does not contain, or does not quote the reply.
func checkPlanHonest(t *testing.T, name string, res engine.Result) {
	t.Helper()
	own, told, ok := strings.Cut(res.SOAP.Plan, " Patient was told: ")
	if !ok || told != strconv.Quote(res.Reply) {
		t.Errorf("%s: plan %q does not quote the reply %q", name, res.SOAP.Plan, res.Reply)
		return
	}
	reply := strings.ToLower(res.Reply)
	if strings.Contains(reply, "do not eat or drink") {
		reply += " nil by mouth"
	}
	if strings.Contains(reply, "raised") {
		reply += " elevat"
	}
	for _, w := range adviceWords {
		if strings.Contains(strings.ToLower(own), w) && !strings.Contains(reply, w) {
			t.Errorf("%s: plan %q says %q but the patient was told %q", name, own, w, res.Reply)
		}
	}
	for _, w := range []string{"told", "advised", "given"} {
		if strings.Contains(own, w) {
			t.Errorf("%s: plan %q claims what the patient heard (%q) instead of quoting it", name, own, w)
		}
	}
}

func TestHandoffPlanSaysOnlyWhatWasSaid(t *testing.T) {
	e := newEngine(t)
	for _, p := range e.lib.protocols {
		for _, flag := range append([]string{""}, p.RedFlags[0].Fact) {
			tr, _ := walk(t, e, p, flag)
			checkPlanHonest(t, p.ID+"/"+flag, last(tr))
		}
	}
	scripts := map[string]script{
		"sore throat self-care": {Age: 30, Sex: "male", Messages: msgs("I have a sore throat", no(3), "No", "Yes", "No", "No", "1 to 2 days")},
		"chest wall pain":       {Age: 30, Sex: "male", Messages: msgs("I have chest pain", no(4), "no", "yes", "no", "A few days")},
		"chest pain red flag":   {Age: 50, Sex: "male", Messages: msgs("I have chest pain", "yes")},
		"low mood review":       {Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "Several days", "Several days", "yes", "no")},
		"emergency":             {Messages: msgs("my dad's face has dropped")},
		"CRB-65 urgent":         {Age: 70, Sex: "male", Messages: msgs("chest infection", no(3), "yes", "yes", "no", "A few days")},
	}
	for name, s := range scripts {
		res := last(run(t, e, s))
		if !res.Terminal {
			t.Fatalf("%s did not finish: %s", name, res.Reply)
		}
		checkPlanHonest(t, name, res)
	}
	// The two examples of the issue: self-care advice is heard, and the
	// urgent chest pain plan's "do not drive" is said.
	sc := last(run(t, e, scripts["sore throat self-care"]))
	if !strings.Contains(sc.Reply, "paracetamol") || !strings.Contains(sc.Reply, "fluids") {
		t.Errorf("self-care reply lacks the advice: %q", sc.Reply)
	}
	cp := last(run(t, e, scripts["chest pain red flag"]))
	if !strings.Contains(cp.Reply, "Do not drive yourself") || !strings.Contains(cp.SOAP.Plan, "not to drive") {
		t.Errorf("chest pain: reply %q plan %q", cp.Reply, cp.SOAP.Plan)
	}
}

// Urgent replies say what was found, and self-harm gets crisis-line
// signposting wherever it is found.
func TestUrgentRepliesAreSpecific(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name string
		s    script
		want []string
	}{
		{"self-harm phrase", script{Messages: msgs("I want to kill myself")}, []string{"116 123", "988", "do not stay alone", "emergency services"}},
		{"self-harm mid-intake", script{Age: 30, Sex: "female", Messages: msgs("feeling low", "I've been cutting myself again")}, []string{"116 123", "988"}},
		{"low mood red flag", script{Age: 30, Sex: "female", Messages: msgs("feeling low", "yes")}, []string{"Thank you for telling me", "116 123", "988"}},
		{"low mood review", script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "Several days", "Several days", "yes", "no")}, []string{"116 123"}},
		{"crushing chest pain", script{Messages: msgs("I have crushing chest pain spreading to my left arm")}, []string{"heart attack", "Do not drive yourself", "Please call emergency services now"}},
		{"chest pain red flag", script{Age: 50, Sex: "male", Messages: msgs("I have chest pain", "yes")}, []string{"spreads to your arm", "heart attack", "Do not drive"}},
		{"stroke phrase", script{Messages: msgs("I think my husband is having a stroke")}, []string{"stroke", "time the symptoms started"}},
		{"headache with weakness", script{Age: 50, Sex: "male", Messages: msgs("headache", "no", "no", "yes")}, []string{"stroke"}},
		{"unclear red flag twice", script{Age: 30, Sex: "male", Messages: msgs("sore throat", "not sure", "I don't know")}, []string{"could not get a clear yes or no", "emergency services"}},
	}
	seen := map[string]string{} // reply → a case that got it
	for _, c := range cases {
		tr := run(t, e, c.s)
		res := last(tr)
		if !res.Terminal {
			t.Errorf("%s: not terminal:\n%s", c.name, dump(tr))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(res.Reply, w) {
				t.Errorf("%s: reply %q lacks %q", c.name, res.Reply, w)
			}
		}
		seen[res.Reply] = c.name
	}
	// Chest pain, stroke and self-harm are each told something of their
	// own, not the generic sentence.
	own := map[string]bool{}
	for reply, name := range seen {
		switch name {
		case "crushing chest pain", "stroke phrase", "self-harm mid-intake":
			own[reply] = true
			if strings.Contains(reply, e.replies.UrgentBecause) {
				t.Errorf("%s: generic reply %q", name, reply)
			}
		}
	}
	if len(own) != 3 {
		t.Errorf("chest pain, stroke and self-harm share replies: %v", own)
	}
}
