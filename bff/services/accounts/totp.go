package accounts

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/clinical-intake/intake-web/bff"
)

// The second factor: TOTP (RFC 6238) as authenticator apps read it (SHA-1,
// six digits, 30-second steps), a code accepted one step either side of
// now and once only, and single-use recovery codes.
//
// The secret is sealed with AES-256-GCM under a key the app keeps in its
// database's secrets table (as the CSRF and flash keys are), with the
// username as additional data: a copy of the clinicians table alone (a
// backup, a dump of one table, a row read through some hole) gives no
// secret, and a sealed secret copied to another account does not open. It
// does not help against someone holding the whole database, secrets table
// included; keeping the key elsewhere would need a key-management service
// the app does not have.
//
// Recovery codes are 16 random base32 characters (80 bits) each, stored as
// SHA-256 of a random 16-byte salt of their own and the code. A slow hash
// (bcrypt) protects guessable secrets; these are random, and 80 bits cannot
// be searched whatever the hash costs, while a sign-in with one would try
// up to ten bcrypt comparisons (about 2.5 s at the app's cost). The salt
// keeps two accounts' equal codes (there are none) apart and precomputation
// out.
const (
	totpIssuer        = "intake-web"
	totpPeriod        = 30
	totpDigits        = otp.DigitsSix
	recoveryCodeCount = 10
	recoveryCodeChars = 16
	// pendingSealLabel and secretSealLabel keep a secret sealed for an
	// enrolment under way from passing for an enrolled one.
	pendingSealLabel = "totp-pending:"
	secretSealLabel  = "totp:"
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Skew: 0, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1}

// seal encrypts secret for username under label.
func (s *Service) seal(label, username string, secret []byte) ([]byte, error) {
	gcm, err := s.gcm()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, secret, []byte(label+username)), nil
}

// open decrypts what seal made for username under label.
func (s *Service) open(label, username string, sealed []byte) ([]byte, error) {
	gcm, err := s.gcm()
	if err != nil {
		return nil, err
	}
	if len(sealed) < gcm.NonceSize() {
		return nil, errors.New("sealed secret too short")
	}
	return gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], []byte(label+username))
}

func (s *Service) gcm() (cipher.AEAD, error) {
	if len(s.totpKey) != 32 {
		return nil, errors.New("accounts: no TOTP key (Deps.TOTPKey, 32 bytes)")
	}
	block, err := aes.NewCipher(s.totpKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// key is the otp key of a raw secret for username.
func totpKey(username string, secret []byte) (*otp.Key, error) {
	return totp.Generate(totp.GenerateOpts{Issuer: totpIssuer, AccountName: username, Period: totpPeriod,
		Secret: secret, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
}

// BeginTOTP starts (or, given the sealed secret of one under way, shows
// again) the enrolment of username's second factor. EINVALID when the
// account has one already: it is reset first (intake-web clinician
// reset-totp).
func (s *Service) BeginTOTP(ctx context.Context, username string, pending []byte) (*bff.TOTPEnrolment, error) {
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil {
		return nil, err
	}
	if c.HasSecondFactor() {
		return nil, bff.Invalid("code", "This account has a second factor already. To set up another, whoever runs this app resets it first: intake-web clinician reset-totp %s.", username)
	}
	secret, err := s.open(pendingSealLabel, username, pending)
	if err != nil || len(secret) != 20 {
		secret = make([]byte, 20) // 160 bits, as RFC 4226 recommends
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
		if pending, err = s.seal(pendingSealLabel, username, secret); err != nil {
			return nil, err
		}
	}
	key, err := totpKey(username, secret)
	if err != nil {
		return nil, err
	}
	img, err := key.Image(232, 232)
	if err != nil {
		return nil, fmt.Errorf("qr code: %w", err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("qr code: %w", err)
	}
	return &bff.TOTPEnrolment{Secret: key.Secret(), URI: key.URL(), QRPNG: buf.Bytes(), Sealed: pending}, nil
}

// ConfirmTOTP ends an enrolment: code must be the authenticator's code of
// the pending secret now. The secret is then the account's second factor,
// and ten recovery codes are made, returned once (to show) and stored
// hashed. Audited. EINVALID (field "code") for a wrong or malformed code,
// or an enrolment that is not this account's or has already ended.
func (s *Service) ConfirmTOTP(ctx context.Context, username string, pending []byte, code string) ([]string, error) {
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil {
		return nil, err
	}
	if c.HasSecondFactor() {
		return nil, bff.Invalid("code", "This account has a second factor already: sign in with it.")
	}
	secret, err := s.open(pendingSealLabel, username, pending)
	if err != nil {
		return nil, bff.Invalid("code", "This set-up has expired. Start again: a new QR code is shown.")
	}
	code = normalCode(code)
	if !sixDigits(code) {
		return nil, bff.Invalid("code", "Type the 6 digits your authenticator app shows for intake-web.")
	}
	step, ok := matchStep(secret, code, s.now())
	if !ok {
		return nil, bff.Invalid("code", "That code does not match. Check the app's clock is right, and type the code it shows now.")
	}
	sealed, err := s.seal(secretSealLabel, username, secret)
	if err != nil {
		return nil, err
	}
	shown, stored, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	if err := s.clinicians.SetClinicianTOTP(ctx, username, sealed, stored); err != nil {
		return nil, err
	}
	if err := s.clinicians.AdvanceTOTPStep(ctx, username, step); err != nil { // the code just typed does not sign in again
		return nil, err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditTOTPEnrol, "", fmt.Sprintf("%d recovery codes made", len(shown)))
	return shown, nil
}

// ResetTOTP removes an account's second factor and its recovery codes
// (intake-web clinician reset-totp), audited under actor; it reports
// whether there was one. The clinician sets up a new one at their next
// sign-in (at once when the app requires one). ENOTFOUND for an unknown
// username.
func (s *Service) ResetTOTP(ctx context.Context, actor, username string) (bool, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil {
		if bff.ErrorCode(err) == bff.ENOTFOUND {
			return false, bff.Errorf(bff.ENOTFOUND, "No clinician is named %s.", username)
		}
		return false, err
	}
	if err := s.clinicians.SetClinicianTOTP(ctx, username, nil, nil); err != nil {
		return false, err
	}
	detail := "account " + username
	if !c.HasSecondFactor() {
		detail += " (had none)"
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditTOTPReset, "", detail)
	return c.HasSecondFactor(), nil
}

// RecoveryCodesLeft is how many of username's recovery codes are unused.
func (s *Service) RecoveryCodesLeft(ctx context.Context, username string) (int, error) {
	codes, err := s.clinicians.RecoveryCodes(ctx, username)
	n := 0
	for _, c := range codes {
		if !c.Used {
			n++
		}
	}
	return n, err
}

// checkSecondFactor checks code (an authenticator's six digits, or a
// recovery code) against c's second factor and uses it up: a TOTP code's
// step is recorded (it and older ones are refused after), a recovery code
// is marked used. It returns what was used, for the audit log, and false
// for a code that does not sign in.
func (s *Service) checkSecondFactor(ctx context.Context, c *bff.Clinician, code string) (string, bool, error) {
	code = normalCode(code)
	if sixDigits(code) {
		secret, err := s.open(secretSealLabel, c.Username, c.TOTPSecret)
		if err != nil {
			return "", false, fmt.Errorf("open the TOTP secret of %s: %w", c.Username, err)
		}
		step, ok := matchStep(secret, code, s.now())
		if !ok {
			return "", false, nil
		}
		if err := s.clinicians.AdvanceTOTPStep(ctx, c.Username, step); bff.ErrorCode(err) == bff.ECONFLICT {
			return "", false, nil // a replay: the code was used already
		} else if err != nil {
			return "", false, err
		}
		return "authenticator code", true, nil
	}
	codes, err := s.clinicians.RecoveryCodes(ctx, c.Username)
	if err != nil {
		return "", false, err
	}
	left := 0
	match := 0
	for _, rc := range codes {
		if rc.Used {
			continue
		}
		left++
		sum := recoveryHash(rc.Salt, code)
		if subtle.ConstantTimeCompare(sum, rc.Hash) == 1 {
			match = rc.ID
		}
	}
	if match == 0 {
		return "", false, nil
	}
	if err := s.clinicians.UseRecoveryCode(ctx, c.Username, match); bff.ErrorCode(err) == bff.ENOTFOUND {
		return "", false, nil // used at this very moment by another sign-in
	} else if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("recovery code %d (%d left)", match, left-1), true, nil
}

// matchStep finds the time step, one either side of now, whose code is
// code, comparing in constant time.
func matchStep(secret []byte, code string, now time.Time) (int64, bool) {
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
	step := now.Unix() / totpPeriod
	found, at := false, int64(0)
	for _, k := range []int64{-1, 0, 1} {
		want, err := totp.GenerateCodeCustom(b32, time.Unix((step+k)*totpPeriod, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			found, at = true, step+k
		}
	}
	return at, found
}

// newRecoveryCodes makes recoveryCodeCount codes: as shown (xxxx-xxxx-
// xxxx-xxxx) and as stored (salted hashes).
func newRecoveryCodes() ([]string, []bff.RecoveryCode, error) {
	var shown []string
	var stored []bff.RecoveryCode
	for i := 1; i <= recoveryCodeCount; i++ {
		raw := rand.Text()[:recoveryCodeChars] // base32 (A–Z, 2–7): 5 bits each
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return nil, nil, err
		}
		stored = append(stored, bff.RecoveryCode{ID: i, Salt: salt, Hash: recoveryHash(salt, raw)})
		lower := strings.ToLower(raw)
		shown = append(shown, lower[:4]+"-"+lower[4:8]+"-"+lower[8:12]+"-"+lower[12:])
	}
	return shown, stored, nil
}

func recoveryHash(salt []byte, code string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(code))
	return h.Sum(nil)
}

// normalCode is a typed code without spaces and dashes, upper-cased (a
// recovery code is read in any case, with or without its dashes).
func normalCode(code string) string {
	if len(code) > 64 {
		return "" // no code is that long; nothing is worth scanning
	}
	return strings.ToUpper(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '\t' {
			return -1
		}
		return r
	}, code))
}

func sixDigits(code string) bool {
	if len(code) != 6 {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
