package web

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Every stream following a turn gets the settling event rendered once.
func TestSettledEventRenderedOnce(t *testing.T) {
	t.Parallel()
	r := newSettledRenders()
	var calls atomic.Int32
	release := make(chan struct{})
	fn := func(raw []byte, csrf string) ([]byte, error) {
		calls.Add(1)
		<-release
		return append([]byte(csrf+":"), raw...), nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			got, err := r.render("enc_1/3", 9, "tok", []byte("{}"), fn)
			if err != nil || string(got) != "tok:{}" {
				t.Errorf("render: %q %v", got, err)
			}
		})
	}
	close(release)
	wg.Wait()
	if _, err := r.render("enc_1/3", 9, "tok", []byte("{}"), fn); err != nil { // a late follower
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("rendered %d times for 51 followers", n)
	}
	if _, err := r.render("enc_1/3", 9, "other", []byte("{}"), fn); err != nil || calls.Load() != 2 {
		t.Fatalf("another session's token must render its own: %d renders, %v", calls.Load(), err)
	}
}
