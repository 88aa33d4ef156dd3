package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func flashCookieOf(b *browser, base string) *http.Cookie {
	u, _ := url.Parse(base)
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == "intake_flash" {
			return c
		}
	}
	return nil
}

// A review saved is said once, on the page after the redirect, then gone;
// the cookie that carried it is encrypted (the words are not in it) and a
// tampered one is ignored.
func TestFlashShownOnceAndTamperProof(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	patient := a.browser()
	intake := patient.start()
	patient.say(intake, "hello") // the intake reaches the service, so it has a handoff
	id := strings.TrimPrefix(intake, "/intakes/")

	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	page := b.get("/clinician/intakes/" + id)
	token := csrfMeta.FindStringSubmatch(page.body)[1]
	res := b.post("/clinician/intakes/"+id+"/review", url.Values{"_csrf": {token}, "note": {"seen"}})
	if res.status != http.StatusSeeOther {
		t.Fatalf("review: %d", res.status)
	}
	set := res.header.Get("Set-Cookie")
	if !strings.Contains(set, "intake_flash=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") {
		t.Fatalf("the flash cookie: %q", set)
	}
	ck := flashCookieOf(b, a.web.URL)
	if ck == nil || strings.Contains(ck.Value, "Review") {
		t.Fatalf("the flash cookie is missing or readable: %+v", ck)
	}
	if p := b.get("/clinician/intakes/" + id); !strings.Contains(p.body, `role="status" id="flash">Review saved.<`) {
		t.Fatalf("the page after the review does not say it was saved")
	}
	if p := b.get("/clinician/intakes/" + id); strings.Contains(p.body, `id="flash"`) {
		t.Error("the flash was shown twice")
	}

	// A tampered cookie: one character of a valid one changed.
	b.post("/clinician/intakes/"+id+"/review", url.Values{"_csrf": {token}, "note": {"again"}})
	ck = flashCookieOf(b, a.web.URL)
	if ck == nil {
		t.Fatal("no flash cookie after the second review")
	}
	v := []byte(ck.Value)
	v[len(v)/2] ^= 1
	if v[len(v)/2] == '=' || v[len(v)/2] > 'z' {
		v[len(v)/2] = 'A'
	}
	req, _ := http.NewRequest("GET", a.web.URL+"/clinician/intakes/"+id, nil)
	u, _ := url.Parse(a.web.URL)
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name != "intake_flash" {
			req.AddCookie(c)
		}
	}
	req.AddCookie(&http.Cookie{Name: "intake_flash", Value: string(v)})
	p := b.do(req)
	if p.status != http.StatusOK || strings.Contains(p.body, `id="flash"`) {
		t.Errorf("a tampered flash cookie: %d, shown=%v", p.status, strings.Contains(p.body, `id="flash"`))
	}

	// Signing out says so on the sign-in page, once.
	token = csrfMeta.FindStringSubmatch(b.get("/clinician").body)[1]
	if p := b.post("/clinician/signout", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.status)
	}
	if p := b.get("/clinician/signin"); !strings.Contains(p.body, "You are signed out.") {
		t.Error("the sign-in page does not say the clinician signed out")
	}
	if p := b.get("/clinician/signin"); strings.Contains(p.body, "You are signed out.") {
		t.Error("the sign-out message was shown twice")
	}
}
