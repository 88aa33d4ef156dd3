package intakeapi_test

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

type ev struct {
	Type, Data, ID string
	Retry          time.Duration
}

func decodeAll(t testing.TB, r io.Reader) ([]ev, error) {
	t.Helper()
	d := intakeapi.NewSSEDecoder(r)
	var out []ev
	for {
		e, err := d.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, ev{e.Type, string(e.Data), e.ID, e.Retry})
	}
}

func TestSSEDecoder(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"one event", "event: message.delta\ndata: {\"text\":\"Hi\"}\n\n",
			[]ev{{Type: "message.delta", Data: `{"text":"Hi"}`}}},
		{"default type is message", "data: x\n\n", []ev{{Type: "message", Data: "x"}}},
		{"multi-line data joined by LF", "data: a\ndata:b\ndata:  c\n\n", []ev{{Type: "message", Data: "a\nb\n c"}}},
		{"comments ignored", ": ok\n:\nevent: e\n: heartbeat\ndata: 1\n\n", []ev{{Type: "e", Data: "1"}}},
		{"CRLF", "event: e\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []ev{{Type: "e", Data: "1"}, {Type: "message", Data: "2"}}},
		{"CR alone", "event: e\rdata: 1\r\rdata: 2\r\r", []ev{{Type: "e", Data: "1"}, {Type: "message", Data: "2"}}},
		{"mixed terminators", "data: 1\r\n\ndata: 2\r\r\ndata: 3\n\r", []ev{{Type: "message", Data: "1"}, {Type: "message", Data: "2"}, {Type: "message", Data: "3"}}},
		{"final event without blank line is discarded", "data: 1\n\ndata: 2\n", []ev{{Type: "message", Data: "1"}}},
		{"unterminated last line is discarded", "data: 1\n\ndata: 2", []ev{{Type: "message", Data: "1"}}},
		{"empty data dispatches empty string", "data\n\ndata:\n\n", []ev{{Type: "message"}, {Type: "message"}}},
		{"no data, no dispatch, type reset", "event: lost\n\ndata: x\n\n", []ev{{Type: "message", Data: "x"}}},
		{"id persists and can be cleared", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			[]ev{{Type: "message", Data: "a", ID: "7"}, {Type: "message", Data: "b", ID: "7"}, {Type: "message", Data: "c"}}},
		{"id with NUL ignored", "id: 1\n\nid: a\x00b\ndata: x\n\n", []ev{{Type: "message", Data: "x", ID: "1"}}},
		{"retry digits only", "retry: 1500\ndata: a\n\nretry: 2s\ndata: b\n\nretry:\ndata: c\n\n",
			[]ev{{Type: "message", Data: "a", Retry: 1500 * time.Millisecond}, {Type: "message", Data: "b", Retry: 1500 * time.Millisecond}, {Type: "message", Data: "c", Retry: 1500 * time.Millisecond}}},
		{"only one space stripped", "data:  two\n\n", []ev{{Type: "message", Data: " two"}}},
		{"unknown fields ignored", "foo: bar\ndata: x\nevent\n\n", []ev{{Type: "message", Data: "x"}}},
		{"colon inside value kept", "data: a:b: c\n\n", []ev{{Type: "message", Data: "a:b: c"}}},
		{"leading BOM skipped once", "\xEF\xBB\xBFdata: x\n\n\xEF\xBB\xBFdata: y\n\n", []ev{{Type: "message", Data: "x"}}},
		{"empty event type means message", "event:\ndata: x\n\n", []ev{{Type: "message", Data: "x"}}},
		{"field names are case-sensitive", "Data: x\nDATA: y\ndata: z\n\n", []ev{{Type: "message", Data: "z"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for name, r := range map[string]io.Reader{
				"whole":    strings.NewReader(tc.in),
				"bytewise": iotest.OneByteReader(strings.NewReader(tc.in)),
				"halves":   iotest.HalfReader(strings.NewReader(tc.in)),
			} {
				got, err := decodeAll(t, r)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !equalEvents(got, tc.want) {
					t.Fatalf("%s:\n got %q\nwant %q", name, got, tc.want)
				}
			}
		})
	}
}

func equalEvents(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An event is handed over as soon as its blank line arrives, even when the
// line ends in a CR whose possible LF has not arrived yet.
func TestSSEDecoderDeliversWithoutReadingAhead(t *testing.T) {
	pr, pw := io.Pipe()
	d := intakeapi.NewSSEDecoder(pr)
	got := make(chan string)
	go func() {
		for {
			e, err := d.Next()
			if err != nil {
				close(got)
				return
			}
			got <- string(e.Data)
		}
	}()
	for _, chunk := range []string{"data: one\r\r", "\ndata: two\n\n"} {
		if _, err := pw.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
		if chunk == "data: one\r\r" {
			if d := <-got; d != "one" {
				t.Fatalf("got %q", d)
			}
		}
	}
	if d := <-got; d != "two" {
		t.Fatalf("got %q", d)
	}
	pw.Close()
	if _, ok := <-got; ok {
		t.Fatal("extra event")
	}
}

func TestSSEDecoderLineTooLong(t *testing.T) {
	d := intakeapi.NewSSEDecoder(strings.NewReader("data: " + strings.Repeat("x", 10000) + "\n\n"))
	d.MaxLine = 8192
	if _, err := d.Next(); !errors.Is(err, intakeapi.ErrLineTooLong) {
		t.Fatalf("err %v, want ErrLineTooLong", err)
	}
	// Long lines within the limit are fine (a terminal turn.completed).
	big := strings.Repeat("y", 100000)
	d = intakeapi.NewSSEDecoder(strings.NewReader("data: " + big + "\n\n"))
	e, err := d.Next()
	if err != nil || string(e.Data) != big {
		t.Fatalf("long line: %v", err)
	}
}

func TestSSEDecoderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: 2\n"), iotest.ErrReader(boom))
	d := intakeapi.NewSSEDecoder(r)
	if e, err := d.Next(); err != nil || string(e.Data) != "1" {
		t.Fatalf("first: %q %v", e.Data, err)
	}
	if _, err := d.Next(); !errors.Is(err, boom) {
		t.Fatalf("second: %v, want the read error", err)
	}
}

// refParse is a literal transcription of the WHATWG algorithm over a whole
// string, for differential fuzzing.
func refParse(in string) []ev {
	in = strings.TrimPrefix(in, "\xEF\xBB\xBF")
	var lines []string
	for {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			break // an unterminated last line is not a line
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var (
		out    []ev
		typ    string
		data   strings.Builder // += would make large inputs quadratic
		lastID string
		retry  time.Duration
	)
	for _, l := range lines {
		switch {
		case l == "":
			if data.Len() == 0 {
				typ = ""
				continue
			}
			t := typ
			if t == "" {
				t = "message"
			}
			out = append(out, ev{t, strings.TrimSuffix(data.String(), "\n"), lastID, retry})
			typ = ""
			data.Reset()
		case l[0] == ':':
		default:
			name, value, found := strings.Cut(l, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			switch name {
			case "event":
				typ = value
			case "data":
				data.WriteString(value)
				data.WriteByte('\n')
			case "id":
				if !strings.Contains(value, "\x00") {
					lastID = value
				}
			case "retry":
				if value != "" && strings.Trim(value, "0123456789") == "" {
					n, err := strconv.ParseInt(value, 10, 64)
					if err != nil || n > 1<<40 {
						n = 1 << 40
					}
					retry = time.Duration(n) * time.Millisecond
				}
			}
		}
	}
	return out
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"event: message.delta\ndata: {\"text\":\"Hi\"}\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		": comment\nid: 1\nretry: 100\ndata\n\n",
		"\xEF\xBB\xBFdata: x\n\n",
		"id: a\x00b\ndata: y\n\ndata: tail",
		"event:\n\ndata:  two\n\r\n",
		"retry: 99999999999999999999\ndata: x\n\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		want := refParse(string(in))
		got, err := decodeAll(t, bytes.NewReader(in))
		if err != nil {
			t.Fatalf("whole: %v", err)
		}
		if !equalEvents(got, want) {
			t.Fatalf("whole input:\n got %q\nwant %q", got, want)
		}
		// Any split of the input into reads gives the same events.
		got, err = decodeAll(t, &chunkReader{b: in, n: int(chunk%16) + 1})
		if err != nil {
			t.Fatalf("chunked: %v", err)
		}
		if !equalEvents(got, want) {
			t.Fatalf("chunks of %d:\n got %q\nwant %q", chunk%16+1, got, want)
		}
	})
}

type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

// A turn's stream as the service sends it: many small deltas, then the rest.
func benchStream(deltas int) ([]byte, int) {
	var b bytes.Buffer
	b.WriteString(": ok\n\n")
	for i := range deltas {
		b.WriteString("event: message.delta\ndata: {\"text\":\"word" + strconv.Itoa(i) + " \"}\n\n")
	}
	b.WriteString("event: message.completed\ndata: {\"elapsed_ms\":2150}\n\n")
	b.WriteString("event: handoff.compiling\ndata: {\"terminal\":false}\n\n")
	b.WriteString("event: handoff.progress\ndata: {\"chars\":512}\n\n")
	b.WriteString(`event: turn.completed` + "\n" + `data: {"encounter_id":"enc_abcdef01_0123456789abcdef","turn_index":3,"assistant_message":"How long have you had the sore throat?","choices":["Less than a day","1-3 days","More than 3 days"],"terminal":false,"urgent":false,"safety_status":"no_red_flags_yet","disposition":"continue_intake","disposition_label":"Intake in progress"}` + "\n\n")
	return b.Bytes(), deltas + 4
}

// BenchmarkSSEDecode measures the parser alone; BenchmarkSSETyped adds the
// JSON decoding into typed events. Both report ns and allocations per event.
func BenchmarkSSEDecode(b *testing.B) { benchSSE(b, false) }

func BenchmarkSSETyped(b *testing.B) { benchSSE(b, true) }

func benchSSE(b *testing.B, typed bool) {
	data, events := benchStream(200)
	r := bytes.NewReader(data)
	stream := func() {
		r.Reset(data)
		d := intakeapi.NewSSEDecoder(r)
		n := 0
		for {
			e, err := d.Next()
			if err != nil {
				break
			}
			n++
			if typed {
				if _, err := intakeapi.DecodeEvent(e.Type, e.Data); err != nil {
					b.Fatal(err)
				}
			}
		}
		if n != events {
			b.Fatalf("%d events, want %d", n, events)
		}
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		stream()
	}
	// One op is one whole stream; report per event too.
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
	b.ReportMetric(testing.AllocsPerRun(20, stream)/float64(events), "allocs/event")
}
