package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// testSSOLinks: a provider's subject signs in as one account, found by the
// issuer and the subject only; one subject per account and one account per
// subject; an account made at a first sign-in is made with its link or not
// at all.
func testSSOLinks(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	const iss, iss2 = "https://idp.example.test/realms/trust", "https://other.example.test"

	_, err := db.SSOLink(ctx, iss, "sub-1")
	WantCode(t, err, bff.ENOTFOUND)

	local := &bff.Clinician{Username: "dr.local", PasswordHash: []byte("h"), CreatedAt: t0}
	if err := db.CreateClinician(ctx, local); err != nil {
		t.Fatal(err)
	}
	WantCode(t, db.LinkSSO(ctx, iss, "sub-1", "nobody", t0), bff.ENOTFOUND)
	if err := db.LinkSSO(ctx, iss, "sub-1", "dr.local", t0); err != nil {
		t.Fatalf("LinkSSO: %v", err)
	}
	if u, err := db.SSOLink(ctx, iss, "sub-1"); err != nil || u != "dr.local" {
		t.Fatalf("SSOLink = %q, %v", u, err)
	}
	// Found by issuer and subject together, exactly.
	for _, k := range [][2]string{{iss2, "sub-1"}, {iss, "SUB-1"}, {iss, "sub-1 "}, {iss + "/", "sub-1"}} {
		_, err := db.SSOLink(ctx, k[0], k[1])
		WantCode(t, err, bff.ENOTFOUND)
	}
	// The account has its subject; the subject its account.
	WantCode(t, db.LinkSSO(ctx, iss, "sub-2", "dr.local", t0), bff.ECONFLICT)
	other := &bff.Clinician{Username: "dr.other", PasswordHash: []byte("h"), CreatedAt: t0}
	if err := db.CreateClinician(ctx, other); err != nil {
		t.Fatal(err)
	}
	WantCode(t, db.LinkSSO(ctx, iss, "sub-1", "dr.other", t0), bff.ECONFLICT)
	// The same subject at another issuer is another person.
	if err := db.LinkSSO(ctx, iss2, "sub-1", "dr.other", t0); err != nil {
		t.Fatalf("LinkSSO at another issuer: %v", err)
	}

	// CreateLinkedClinician: both or neither.
	sso := &bff.Clinician{Username: "dr.sso", CreatedAt: t0.Add(time.Second)}
	if err := db.CreateLinkedClinician(ctx, sso, iss, "sub-3"); err != nil {
		t.Fatalf("CreateLinkedClinician: %v", err)
	}
	if c, err := db.Clinician(ctx, "dr.sso"); err != nil || len(c.PasswordHash) != 0 || c.Disabled {
		t.Fatalf("the account made: %+v, %v", c, err)
	}
	if u, err := db.SSOLink(ctx, iss, "sub-3"); err != nil || u != "dr.sso" {
		t.Fatalf("its link: %q, %v", u, err)
	}
	// A taken username: no link is left behind.
	WantCode(t, db.CreateLinkedClinician(ctx, &bff.Clinician{Username: "dr.local", CreatedAt: t0}, iss, "sub-4"), bff.ECONFLICT)
	_, err = db.SSOLink(ctx, iss, "sub-4")
	WantCode(t, err, bff.ENOTFOUND)
	// A linked subject: no account is left behind.
	WantCode(t, db.CreateLinkedClinician(ctx, &bff.Clinician{Username: "dr.twin", CreatedAt: t0}, iss, "sub-3"), bff.ECONFLICT)
	_, err = db.Clinician(ctx, "dr.twin")
	WantCode(t, err, bff.ENOTFOUND)
}
