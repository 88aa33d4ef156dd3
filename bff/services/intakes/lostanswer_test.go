package intakes_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
)

// losingProxy stands between the app and the sandbox like a gateway that
// loses answers: while armed, the next turn request is delivered to the
// sandbox (which applies it), and the app gets a 502 or a cut connection
// instead of the answer. It is the app's client's transport, so it reaches
// the sandbox in memory and runs in a synctest bubble.
type losingProxy struct {
	next      http.RoundTripper
	mode      atomic.Value // "", "502" or "cut"
	noHandoff atomic.Bool  // every handoff read fails
}

func (p *losingProxy) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.noHandoff.Load() && strings.HasSuffix(r.URL.Path, "/handoff") {
		return gatewayAnswer(r, http.StatusInternalServerError, `{"error":{"code":"internal_error","message":"gateway failed"}}`), nil
	}
	mode, _ := p.mode.Load().(string)
	if mode == "" || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/turns") {
		return p.next.RoundTrip(r)
	}
	p.mode.Store("")
	res, err := p.next.RoundTrip(r.Clone(context.WithoutCancel(r.Context())))
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body) // the turn runs to its end upstream
		res.Body.Close()
	}
	if mode == "cut" {
		return nil, io.ErrUnexpectedEOF // the connection died before the answer
	}
	return gatewayAnswer(r, http.StatusBadGateway, `{"error":{"code":"upstream_error","message":"bad gateway"}}`), nil
}

func gatewayAnswer(r *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: r, ContentLength: int64(len(body)),
	}
}

func (f *fixture) behind(proxy *losingProxy) core {
	f.t.Helper()
	proxy.next = f.sb.Client.Transport
	client, err := intakeapi.New(intakeapi.Config{BaseURL: f.sb.URL, APIKey: key, HTTPClient: &http.Client{Transport: proxy}})
	if err != nil {
		f.t.Fatal(err)
	}
	db := sqlitetest.MustOpenDB(f.t)
	f.db = db // f.upstream finds the encounter here
	svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: relay.NewHub(time.Minute, nil)})
	f.t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return svc
}

// TestALostAnswerIsReconciledNotGuessed: the service applied the turn but
// its answer was lost (a 502 from a gateway, or a cut connection) before
// any stream started. The turn must be settled from the handoff as landed,
// with the service's reply, and not offered for sending again.
func TestALostAnswerIsReconciledNotGuessed(t *testing.T) {
	for _, mode := range []string{"502", "cut"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t)
				proxy := &losingProxy{}
				svc := f.behind(proxy)
				ctx := context.Background()
				in, err := svc.StartIntake(ctx, "owner-1", bff.StartForm{Synthetic: true, SubmissionID: "s"})
				if err != nil {
					t.Fatal(err)
				}
				proxy.mode.Store(mode)
				turn, err := svc.SendTurn(ctx, "owner-1", in.ID, "my message", "sub-1")
				if err != nil {
					t.Fatal(err)
				}
				wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				svc.WaitSettled(wctx, in.ID, turn.Index)
				_, got, err := svc.Turn(ctx, "owner-1", in.ID, turn.Index)
				if err != nil {
					t.Fatal(err)
				}
				conv, _ := f.upstream(in.ID)
				if len(conv) != 2 || conv[0].Text != "my message" {
					t.Fatalf("the service's record: %+v", conv)
				}
				if got.Status != bff.TurnCompleted || got.Reply != conv[1].Text || got.Retryable() {
					t.Fatalf("turn settled %s/%q %q (%s); the service holds it with reply %q", got.Status, got.ErrorCode, got.Reply, got.ErrorMessage, conv[1].Text)
				}
				if err := svc.CheckRetry(ctx, "owner-1", in.ID, turn.Index); bff.ErrorCode(err) != bff.ECONFLICT {
					t.Fatalf("a landed turn may be sent again: %v", err)
				}
			})
		})
	}
}

// TestAnUnconfirmedTurnIsNotOfferedAgain: the answer was lost and the
// handoff cannot be read either, so nobody knows whether the turn landed
// (it did). The turn is failed as unconfirmed, and may not be sent again.
// (The reconciler waits 1 + 2 + 3 s between its handoff reads: on the
// bubble's clock.)
func TestAnUnconfirmedTurnIsNotOfferedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		proxy := &losingProxy{}
		svc := f.behind(proxy)
		ctx := context.Background()
		in, err := svc.StartIntake(ctx, "owner-1", bff.StartForm{Synthetic: true, SubmissionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		proxy.mode.Store("502")
		proxy.noHandoff.Store(true)
		turn, err := svc.SendTurn(ctx, "owner-1", in.ID, "my message", "sub-1")
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		svc.WaitSettled(wctx, in.ID, turn.Index)
		_, got, err := svc.Turn(ctx, "owner-1", in.ID, turn.Index)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != bff.TurnFailed || got.ErrorCode != bff.CodeUnconfirmed || got.Retryable() {
			t.Fatalf("turn settled %s/%q (%s), want failed/%q and not retryable", got.Status, got.ErrorCode, got.ErrorMessage, bff.CodeUnconfirmed)
		}
		if err := svc.CheckRetry(ctx, "owner-1", in.ID, turn.Index); bff.ErrorCode(err) != bff.ECONFLICT {
			t.Fatalf("an unconfirmed turn may be sent again: %v", err)
		}
	})
}

// TestALandedTurnAfterAnUnconfirmedOneIsFound: the first turn landed but
// could not be confirmed (its answer and the handoff were both lost), so
// the app counts no completed turn before the second. The second lands and
// its answer is lost too; the reconciler must find it as the service's
// last patient message, not expect it where the app's count would put it,
// or it would offer Send again for a message the engine already has.
func TestALandedTurnAfterAnUnconfirmedOneIsFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		proxy := &losingProxy{}
		svc := f.behind(proxy)
		ctx := context.Background()
		in, err := svc.StartIntake(ctx, "owner-1", bff.StartForm{Synthetic: true, SubmissionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		send := func(message, sub string) *bff.Turn {
			t.Helper()
			turn, err := svc.SendTurn(ctx, "owner-1", in.ID, message, sub)
			if err != nil {
				t.Fatal(err)
			}
			svc.WaitSettled(ctx, in.ID, turn.Index)
			_, got, err := svc.Turn(ctx, "owner-1", in.ID, turn.Index)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		proxy.mode.Store("502")
		proxy.noHandoff.Store(true)
		if first := send("first words", "sub-1"); first.ErrorCode != bff.CodeUnconfirmed {
			t.Fatalf("first turn settled %s/%q, want unconfirmed", first.Status, first.ErrorCode)
		}
		proxy.noHandoff.Store(false)
		proxy.mode.Store("502")
		second := send("second words", "sub-2")
		conv, _ := f.upstream(in.ID)
		if len(conv) != 4 || conv[2].Text != "second words" {
			t.Fatalf("the service's record: %+v", conv)
		}
		if second.Status != bff.TurnCompleted || second.Reply != conv[3].Text || second.Retryable() {
			t.Fatalf("second turn settled %s/%q %q; the service holds it with reply %q", second.Status, second.ErrorCode, second.Reply, conv[3].Text)
		}
	})
}
