// Package oidctest starts a real OpenID Provider on loopback for tests: the
// provider package (op) of github.com/zitadel/oidc/v3 over a small
// in-memory storage, with a login page of its own. Tests sign in through it
// as a browser would, and can make its token endpoint hand out a doctored
// ID token (Tamper) to see the app refuse it.
//
// The storage and the login page are adapted from zitadel/oidc's
// example/server (storage/, exampleop/), cut to the authorization code
// flow: Copyright The zitadel/oidc Contributors, licensed under the Apache
// License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0); the
// changes are this project's.
package oidctest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/text/language"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is an account at the provider.
type User struct {
	Subject  string // the sub claim; "" = "sub-" + Username
	Username string // preferred_username
	Password string
	Email    string
	Roles    []string // the "roles" claim (and realm_access.roles, as Keycloak nests them)
}

// Provider is a running OpenID Provider.
type Provider struct {
	URL          string // the issuer: http://127.0.0.1:port
	ClientID     string
	ClientSecret string

	srv     *httptest.Server
	storage *storage

	mu     sync.Mutex
	tamper func(claims map[string]any) (key *rsa.PrivateKey, kid string)
}

// Start serves a provider for t with one web client (ClientID,
// ClientSecret) that may redirect to /clinician/sso/callback and back to
// /clinician/signin on any loopback port; it stops at the test's end.
func Start(t testing.TB, users ...User) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("oidctest: listen: %v", err)
	}
	issuer := "http://" + ln.Addr().String()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("oidctest: key: %v", err)
	}
	p := &Provider{URL: issuer, ClientID: "intake-web", ClientSecret: "test-secret-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	st := &storage{
		authRequests: map[string]*authRequest{}, codes: map[string]string{}, users: map[string]*User{},
		signing: signingKey{id: "key-1", key: key},
		client: &client{id: p.ClientID, secret: p.ClientSecret,
			redirectGlobs: []string{"http://127.0.0.1:*/clinician/sso/callback"},
			logoutGlobs:   []string{"http://127.0.0.1:*/clinician/signin", "http://127.0.0.1:*/clinician/signin?*"}},
	}
	for i := range users {
		u := users[i]
		if u.Subject == "" {
			u.Subject = "sub-" + u.Username
		}
		st.users[u.Subject] = &u
	}
	p.storage = st
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:                sha256.Sum256([]byte(p.ClientSecret)),
		DefaultLogoutRedirectURI: "/logged-out",
		CodeMethodS256:           true,
		AuthMethodPost:           true,
		SupportedUILocales:       []language.Tag{language.English},
	}, st, op.StaticIssuer(issuer), op.WithAllowInsecure(),
		op.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatalf("oidctest: provider: %v", err)
	}
	login := &loginPage{storage: st, callback: op.AuthCallbackURL(provider)}
	intercept := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", login.show)
	mux.Handle("POST /login", intercept.HandlerFunc(login.check))
	mux.HandleFunc("/logged-out", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<!doctype html><title>Signed out</title><h1>You are signed out of the test provider.</h1>")
	})
	mux.Handle("/", p.tokens(provider))
	p.srv = httptest.NewUnstartedServer(mux)
	p.srv.Listener.Close()
	p.srv.Listener = ln
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

// SignInURLPrefix is where the provider's login page is.
func (p *Provider) SignInURLPrefix() string { return p.URL + "/login" }

// Tamper makes the token endpoint rewrite each ID token it hands out:
// change the claims in place and return the key to sign with (nil: the
// provider's own) and its key id. Tamper(nil) stops it.
func (p *Provider) Tamper(f func(claims map[string]any) (key *rsa.PrivateKey, kid string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = f
}

// Key is the provider's signing key and its key id.
func (p *Provider) Key() (*rsa.PrivateKey, string) {
	return p.storage.signing.key, p.storage.signing.id
}

// tokens wraps the provider: the token endpoint's ID token goes through
// the tamper function when one is set.
func (p *Provider) tokens(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		tamper := p.tamper
		p.mu.Unlock()
		if r.URL.Path != "/oauth/token" || tamper == nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var resp map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(body, &resp) == nil {
			if raw, ok := resp["id_token"].(string); ok {
				if doctored, err := p.resign(raw, tamper); err == nil {
					resp["id_token"] = doctored
					body, _ = json.Marshal(resp)
				}
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// resign decodes an ID token's claims, lets tamper change them, and signs
// them again.
func (p *Provider) resign(raw string, tamper func(map[string]any) (*rsa.PrivateKey, string)) (string, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", errors.New("not a JWS")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", err
	}
	key, kid := tamper(claims)
	if key == nil {
		key, kid = p.Key()
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(b)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// loginPage is the provider's sign-in page (adapted from exampleop/login.go).
type loginPage struct {
	storage  *storage
	callback func(ctx context.Context, id string) string
}

var loginTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test identity provider: sign in</title></head>
<body><main><h1>Test identity provider</h1>
<form method="post" action="/login">
<input type="hidden" name="id" value="{{.ID}}">
<p><label for="username">Username</label> <input id="username" name="username" autocomplete="username"></p>
<p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"></p>
{{if .Error}}<p role="alert">{{.Error}}</p>{{end}}
<p><button type="submit">Sign in at the provider</button></p>
</form></main></body></html>`))

func (l *loginPage) show(w http.ResponseWriter, r *http.Request) {
	render(w, r.URL.Query().Get("authRequestID"), "")
}

func render(w http.ResponseWriter, id, msg string) {
	var b bytes.Buffer
	_ = loginTmpl.Execute(&b, struct{ ID, Error string }{id, msg})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

func (l *loginPage) check(w http.ResponseWriter, r *http.Request) {
	id := r.FormValue("id")
	if err := l.storage.checkPassword(r.FormValue("username"), r.FormValue("password"), id); err != nil {
		render(w, id, err.Error())
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), id), http.StatusFound)
}

// signingKey is op.SigningKey and op.Key.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (s *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (s *signingKey) Key() any                                    { return s.key }
func (s *signingKey) ID() string                                  { return s.id }

type publicKey struct{ signingKey }

func (k *publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *publicKey) Use() string                        { return "sig" }
func (k *publicKey) Key() any                           { return &k.key.PublicKey }

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// SignIn plays a browser at the provider: it opens authURL (the app's
// redirect to the provider), signs in on the login page as username, and
// returns the URL the provider sends the browser back to (the app's
// callback, with the code and the state), without opening it.
func (p *Provider) SignIn(t testing.TB, authURL, username, password string) *url.URL {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := authURL
	for range 10 {
		var (
			resp *http.Response
			err  error
		)
		if u, _ := url.Parse(next); u != nil && u.Path == "/login" && u.Query().Get("authRequestID") != "" {
			resp, err = hc.PostForm(p.URL+"/login", url.Values{"id": {u.Query().Get("authRequestID")}, "username": {username}, "password": {password}})
		} else {
			resp, err = hc.Get(next)
		}
		if err != nil {
			t.Fatalf("oidctest: sign in: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			t.Fatalf("oidctest: sign in: %s answered %d without a redirect: %.300s", next, resp.StatusCode, body)
		}
		if !strings.HasPrefix(loc.String(), p.URL) {
			return loc
		}
		next = loc.String()
	}
	t.Fatalf("oidctest: sign in: too many redirects")
	return nil
}
