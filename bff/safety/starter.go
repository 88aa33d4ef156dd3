package safety

import _ "embed"

//go:embed starter.yaml
var starterYAML []byte

// Starter is the starter hazard log: the sandbox's hazards (an emergency not
// escalated, a same-day problem sent home, a misread answer, a reply not
// shown unedited, a lost or doubled turn, a handoff shown to the wrong
// person), each control pointing at what tests it today. A fresh log each
// call.
func Starter() *Log {
	l, err := ParseLog(starterYAML)
	if err != nil {
		panic("safety: the starter log does not load: " + err.Error())
	}
	return l
}
