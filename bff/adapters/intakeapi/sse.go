package intakeapi

import (
	"errors"
	"io"
	"time"
)

// SSEEvent is one event dispatched by an SSEDecoder.
type SSEEvent struct {
	// Type is the event field, or "message" when the event had none.
	Type string
	// Data is the event's data lines joined by "\n". It aliases the decoder's
	// buffer and is valid only until the next call to Next.
	Data []byte
	// ID is the last event ID at dispatch (it persists across events).
	ID string
	// Retry is the reconnection time last set by a retry field, 0 if none.
	Retry time.Duration
}

// ErrLineTooLong is returned by SSEDecoder.Next for a line over MaxLine bytes.
var ErrLineTooLong = errors.New("intakeapi: server-sent event line too long")

// DefaultMaxSSELine bounds one line of a stream. A terminal turn.completed
// carries the whole handoff on one data line, a few tens of KB at most.
const DefaultMaxSSELine = 4 << 20

// SSEDecoder reads Server-Sent Events as the WHATWG HTML standard's event
// stream interpretation does: lines end in CRLF, LF or CR; a leading BOM is
// skipped; lines starting with ":" are comments; a field without a colon has
// an empty value and one space after the colon is dropped; data lines are
// joined with "\n"; "id" sets the last event ID unless its value contains NUL;
// "retry" is honoured only when all ASCII digits; an empty line dispatches the
// event unless its data is empty; unknown fields are ignored. At end of input
// an unfinished event (no blank line after it) is discarded, as the standard
// says: it may be truncated, so a stream cut there is an interruption.
//
// It delivers each event as soon as its blank line is read and never reads
// ahead to classify a CR. Bytes are not UTF-8 validated; no ASCII byte can be
// part of a multi-byte sequence, so line splitting matches a decoding reader.
type SSEDecoder struct {
	// MaxLine bounds one line; 0 means DefaultMaxSSELine.
	MaxLine int

	r          io.Reader
	buf        []byte
	start, end int
	rerr       error
	skipLF     bool // the last line ended in CR: a following LF belongs to it
	bomDone    bool
	typ        []byte
	data       []byte
	lastID     string
	retry      time.Duration
}

// sseStartBuffer is a decoder's first buffer: a turn's stream is mostly
// short lines, and a decoder lives as long as its turn (thousands at once
// while the engine thinks); a longer line doubles it, up to MaxLine.
const sseStartBuffer = 512

// NewSSEDecoder returns a decoder reading from r.
func NewSSEDecoder(r io.Reader) *SSEDecoder {
	return &SSEDecoder{r: r, buf: make([]byte, sseStartBuffer)}
}

// LastEventID returns the last event ID seen so far.
func (d *SSEDecoder) LastEventID() string { return d.lastID }

// Next returns the next event. At the end of input it returns io.EOF (an
// unfinished last event is discarded); a read error is returned as is.
func (d *SSEDecoder) Next() (SSEEvent, error) {
	for {
		line, err := d.readLine()
		if err != nil {
			d.typ, d.data = d.typ[:0], d.data[:0]
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if len(d.data) == 0 {
				d.typ = d.typ[:0]
				continue
			}
			ev := SSEEvent{
				Type:  eventType(d.typ),
				Data:  d.data[:len(d.data)-1], // drop the final "\n"
				ID:    d.lastID,
				Retry: d.retry,
			}
			d.typ, d.data = d.typ[:0], d.data[:0]
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, line[len(line):]
		for i, c := range line {
			if c == ':' {
				name, value = line[:i], line[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
				break
			}
		}
		switch string(name) {
		case "event":
			d.typ = append(d.typ[:0], value...)
		case "data":
			d.data = append(d.data, value...)
			d.data = append(d.data, '\n')
		case "id":
			if !containsNUL(value) && string(value) != d.lastID {
				d.lastID = string(value)
			}
		case "retry":
			if ms, ok := parseDigits(value); ok {
				d.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// eventType avoids an allocation for the names this service sends.
func eventType(b []byte) string {
	switch string(b) {
	case "":
		return "message"
	case EventMessageDelta:
		return EventMessageDelta
	case EventMessageCompleted:
		return EventMessageCompleted
	case EventHandoffCompiling:
		return EventHandoffCompiling
	case EventHandoffProgress:
		return EventHandoffProgress
	case EventTurnCompleted:
		return EventTurnCompleted
	case EventError:
		return EventError
	}
	return string(b)
}

func containsNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// maxRetryMS caps absurd retry values instead of overflowing.
const maxRetryMS = int64(1) << 40

func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < maxRetryMS {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, maxRetryMS), true
}

// readLine returns the next complete line without its terminator. The slice
// is valid until the next call. A trailing unterminated line at EOF is not a
// line (the standard discards it with the pending event).
func (d *SSEDecoder) readLine() ([]byte, error) {
	for {
		if !d.bomDone && !d.skipBOM() {
			if err := d.fill(); err != nil {
				return nil, err
			}
			continue
		}
		if d.skipLF && d.start < d.end {
			if d.buf[d.start] == '\n' {
				d.start++
			}
			d.skipLF = false
		}
		if !d.skipLF {
			win := d.buf[d.start:d.end]
			for i, c := range win {
				if c == '\n' || c == '\r' {
					d.skipLF = c == '\r'
					d.start += i + 1
					return win[:i], nil
				}
			}
		}
		if err := d.fill(); err != nil {
			return nil, err
		}
	}
}

// skipBOM drops a leading UTF-8 BOM; it reports false while the bytes so far
// are a proper prefix of one and more input may decide.
func (d *SSEDecoder) skipBOM() bool {
	const bom = "\xEF\xBB\xBF"
	avail := d.buf[d.start:d.end]
	n := min(len(avail), len(bom))
	if string(avail[:n]) != bom[:n] {
		d.bomDone = true
		return true
	}
	if n == len(bom) {
		d.start += len(bom)
		d.bomDone = true
		return true
	}
	if d.rerr != nil { // input ended inside a would-be BOM
		d.bomDone = true
		return true
	}
	return false
}

// fill reads more input, compacting or growing the buffer. It returns the
// read error once everything buffered has been consumed as lines.
func (d *SSEDecoder) fill() error {
	if d.rerr != nil {
		return d.rerr
	}
	if d.start > 0 {
		d.end = copy(d.buf, d.buf[d.start:d.end])
		d.start = 0
	}
	if d.end == len(d.buf) {
		limit := d.MaxLine
		if limit <= 0 {
			limit = DefaultMaxSSELine
		}
		if len(d.buf) >= limit {
			d.rerr = ErrLineTooLong
			return d.rerr
		}
		nb := make([]byte, min(2*len(d.buf), limit))
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	for range 100 { // io.Reader may return 0, nil; do not spin forever
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		if err != nil {
			d.rerr = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	d.rerr = io.ErrNoProgress
	return d.rerr
}
