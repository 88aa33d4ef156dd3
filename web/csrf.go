package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
)

// csrfCookie carries the CSRF token of a visitor with no stored session.
const csrfCookie = "intake_csrf"

// csrfSigner issues and checks the pre-session CSRF tokens: a random nonce
// and its HMAC under a key kept in the database, all hex. A token cannot be
// minted without the key, so a cookie planted by another site (or a sibling
// domain) is refused; the form field must still equal the cookie.
type csrfSigner struct{ key []byte }

const csrfNonceLen, csrfMACLen = 16, 16

func (k csrfSigner) mac(nonce []byte) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("intake-web csrf v1\x00"))
	m.Write(nonce)
	return m.Sum(nil)[:csrfMACLen]
}

func (k csrfSigner) issue() string {
	nonce := make([]byte, csrfNonceLen)
	_, _ = rand.Read(nonce)
	return hex.EncodeToString(nonce) + hex.EncodeToString(k.mac(nonce))
}

func (k csrfSigner) valid(tok string) bool {
	if len(tok) != 2*(csrfNonceLen+csrfMACLen) {
		return false
	}
	b, err := hex.DecodeString(tok)
	if err != nil {
		return false
	}
	return hmac.Equal(b[csrfNonceLen:], k.mac(b[:csrfNonceLen]))
}
