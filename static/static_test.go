package static

import (
	"regexp"
	"testing"
)

func TestHashedNames(t *testing.T) {
	u := URL("css/app.css")
	if !regexp.MustCompile(`^/static/css/app\.[0-9a-f]{10}\.css$`).MatchString(u) {
		t.Fatalf("URL(css/app.css) = %s", u)
	}
	a, hashed, ok := Lookup(u[len("/static/"):])
	if !ok || !hashed || a.Name != "css/app.css" || len(a.Data) == 0 {
		t.Fatalf("Lookup of the hashed name: %+v %v %v", a, hashed, ok)
	}
	if b, hashed, ok := Lookup("css/app.css"); !ok || hashed || b != a {
		t.Fatalf("Lookup of the plain name: %v %v", hashed, ok)
	}
	if _, _, ok := Lookup("css/app.0000000000.css"); ok {
		t.Error("a stale hash was found")
	}
	if got := URL("css/none.css"); got != "/static/css/none.css" {
		t.Errorf("URL of an unknown file: %s", got)
	}
}
