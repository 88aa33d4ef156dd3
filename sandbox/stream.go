package sandbox

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// Kinds of step in a turn's schedule, named after the stream events.
const (
	evNameDelta     = intakeservice.EventMessageDelta
	evNameCompleted = intakeservice.EventMessageCompleted
	evNameCompiling = intakeservice.EventHandoffCompiling
	evNameProgress  = intakeservice.EventHandoffProgress
	evNameTurn      = intakeservice.EventTurnCompleted
	evNameError     = intakeservice.EventError
	progressSteps   = 3
)

// step is one event of a turn, sent delay after the previous one.
type step struct {
	delay time.Duration
	event string
	text  string // the fragment, for message.delta
	n     int    // the progress step, for handoff.progress
}

// scheduleFor lays out the events of a reply. Blocking turns wait the same
// total time, so both modes take as long as the reply would stream.
func (s *Service) scheduleFor(reply string, slow bool) []step {
	frags := fragments(reply)
	first := s.cfg.FirstTokenDelay
	if slow {
		first += s.cfg.SlowStart
	}
	per := s.cfg.FragmentDelay
	if s.cfg.ReplyDuration > 0 && len(frags) > 0 {
		// Deterministic per reply: between ReplyDuration and twice it.
		h := fnv.New32a()
		_, _ = h.Write([]byte(reply))
		total := s.cfg.ReplyDuration + time.Duration(h.Sum32()%1000)*s.cfg.ReplyDuration/1000
		per = total / time.Duration(len(frags))
	}
	steps := make([]step, 0, len(frags)+3+progressSteps)
	for i, f := range frags {
		d := per
		if i == 0 {
			d = first
		}
		steps = append(steps, step{delay: d, event: evNameDelta, text: f})
	}
	steps = append(steps, step{event: evNameCompleted}, step{event: evNameCompiling})
	for i := 1; i <= progressSteps; i++ {
		steps = append(steps, step{delay: s.cfg.FragmentDelay, event: evNameProgress, n: i})
	}
	return append(steps, step{event: evNameTurn})
}

func (p *turnPlan) total() time.Duration {
	var d time.Duration
	for _, st := range p.schedule {
		d += st.delay
	}
	return d
}

// fragments cuts text into pieces of up to three words each, keeping every
// character, so the fragments concatenate to the text exactly.
func fragments(text string) []string {
	var out []string
	start, words, inSpace := 0, 0, true
	for i, r := range text {
		space := unicode.IsSpace(r)
		if !space && inSpace {
			if words == 3 {
				out = append(out, text[start:i])
				start, words = i, 0
			}
			words++
		}
		inSpace = space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// stream plays a turn as Server-Sent Events. A client that goes away does not
// stop the schedule: the turn was applied and its reply "finishes" on time.
func (s *Service) stream(w http.ResponseWriter, p *turnPlan) {
	h := w.Header()
	h.Set("Content-Type", contentTypeEventStream)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sink{w: w, rc: http.NewResponseController(w)}
	out.flush()

	deltas := 0
	for _, st := range p.schedule {
		if st.event == evNameDelta {
			deltas++
		}
	}
	// Faults strike after a few fragments, but never after the last one.
	cut := min(3, max(deltas-1, 1))
	var body []byte
	for i, st := range p.schedule {
		if i == cut && p.fault == faultStreamDrop {
			go s.play(p, p.schedule[i:])
			panic(http.ErrAbortHandler)
		}
		s.sleep(st.delay)
		if i == cut && p.fault == faultStreamError {
			s.unblock(p)
			out.event(evNameError, intakeservice.StreamError{Code: codeUpstreamError, Message: "The engine failed while replying; the turn was not applied. Read the handoff before retrying."})
			return
		}
		switch st.event {
		case evNameDelta:
			out.event(st.event, intakeservice.MessageDelta{Text: st.text})
		case evNameCompleted:
			// Free the intake first: a client may send its next turn the
			// moment it reads this event.
			s.unblock(p)
			out.event(st.event, intakeservice.MessageCompleted{ElapsedMS: float64(s.now().Sub(p.started).Milliseconds())})
		case evNameCompiling:
			out.event(st.event, intakeservice.HandoffCompiling{Terminal: p.result.Terminal})
			body, _ = json.Marshal(s.turnBody(p))
		case evNameProgress:
			out.event(st.event, intakeservice.HandoffProgress{Chars: len(body) * st.n / progressSteps})
		case evNameTurn:
			out.raw(st.event, body)
		}
	}
}

// play runs the rest of a schedule with nobody listening: after a dropped
// connection the reply still takes its time before the next turn is accepted.
func (s *Service) play(p *turnPlan, rest []step) {
	for _, st := range rest {
		s.sleep(st.delay)
		if st.event == evNameCompleted {
			s.unblock(p)
			return
		}
	}
	s.unblock(p)
}

// unblock lets the intake accept its next turn.
func (s *Service) unblock(p *turnPlan) {
	s.mu.Lock()
	p.in.busy = false
	s.mu.Unlock()
}

// sink writes events and stops writing after the first failure.
type sink struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	dead bool
}

func (o *sink) event(name string, v any) {
	b, _ := json.Marshal(v)
	o.raw(name, b)
}

func (o *sink) raw(name string, data []byte) {
	if o.dead {
		return
	}
	var b strings.Builder
	b.Grow(len(name) + len(data) + 16)
	b.WriteString("event: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := o.w.Write([]byte(b.String())); err != nil {
		o.dead = true
		return
	}
	o.flush()
}

func (o *sink) flush() {
	if o.dead {
		return
	}
	if err := o.rc.Flush(); err != nil {
		o.dead = true
	}
}
