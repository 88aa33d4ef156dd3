package bff

import (
	"regexp"
	"strconv"
	"strings"
)

// Real identifiers are refused before a message or a medical history
// leaves for the service: the service is for synthetic scenarios only, and
// a disclaimer and a checkbox do not stop a tester pasting a real record.
// The checks look for what a real identifier has and a made-up one usually
// lacks (a valid check digit, an issued range, a real mail domain), and let
// the official test and fiction ranges through, so testers have stand-ins.
// Hand-written: no maintained Go library covers NHS numbers, issued SSN
// ranges and the UK and US fiction ranges together.

// RealIdentifier is an identifier in a text that looks real.
type RealIdentifier struct {
	Kind   string // what it looks like, in words
	Masked string // the match with most of it hidden, to say which one
	Advice string // a synthetic stand-in to use instead
}

var (
	nhsNumber   = regexp.MustCompile(`\b(\d{3})[ -]?(\d{3})[ -]?(\d{4})\b`)
	ssn         = regexp.MustCompile(`\b(\d{3})[- ](\d{2})[- ](\d{4})\b`)
	ssnBare     = regexp.MustCompile(`(?i)\b(?:ssn|social security(?: number| no\.?)?)\D{0,20}(\d{3})-?(\d{2})-?(\d{4})\b`)
	email       = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@([a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,})\b`)
	phone       = regexp.MustCompile(`(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,5}\)[ .-]?)?\d[\d .-]{6,15}\d`)
	dateOfBirth = regexp.MustCompile(`(?i)\b(?:\d{1,2}[/.-]\d{1,2}[/.-](?:19|20)\d{2}|(?:19|20)\d{2}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (?:19|20)\d{2})\b`)
	fullName    = regexp.MustCompile(`(?i)\b(?:my name is|name:|i am called|i'm called|patient:|(?:mr|mrs|ms|miss|dr)\.?) +[a-z][a-z'-]+ +[a-z][a-z'-]+`)
)

// FindRealIdentifier returns the first identifier in text that looks real.
func FindRealIdentifier(text string) (RealIdentifier, bool) {
	for _, m := range nhsNumber.FindAllStringSubmatch(text, -1) {
		digits := m[1] + m[2] + m[3]
		if nhsCheckDigitValid(digits) && !strings.HasPrefix(digits, "999") {
			return RealIdentifier{Kind: "an NHS number with a valid check digit", Masked: mask(m[0], 2),
				Advice: "use an NHS test number (they start with 999), or leave it out"}, true
		}
	}
	for _, re := range []*regexp.Regexp{ssn, ssnBare} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			n := len(m)
			if ssnIssued(m[n-3], m[n-2], m[n-1]) {
				return RealIdentifier{Kind: "a US Social Security number in an issued range", Masked: mask(m[0], 2),
					Advice: "use a number that is never issued (an area of 9xx, such as 987-65-4320), or leave it out"}, true
			}
		}
	}
	for _, m := range email.FindAllStringSubmatch(text, -1) {
		if !reservedDomain(strings.ToLower(m[1])) {
			return RealIdentifier{Kind: "an email address", Masked: maskEmail(m[0]),
				Advice: "use an address at example.com, or leave it out"}, true
		}
	}
	for _, loc := range phone.FindAllStringIndex(text, -1) {
		m := text[loc[0]:loc[1]]
		// A number labelled as an NHS number was judged above by its check
		// digit: an invalid one is a made-up NHS number, not a phone.
		if strings.Contains(strings.ToLower(text[max(0, loc[0]-20):loc[0]]), "nhs") {
			continue
		}
		if realPhone(m) {
			return RealIdentifier{Kind: "a phone number", Masked: mask(m, 3),
				Advice: "use a number from a fiction range (07700 900000 to 07700 900999 in the UK, 555-0100 to 555-0199 in the US), or leave it out"}, true
		}
	}
	if d := dateOfBirth.FindString(text); d != "" {
		if n := fullName.FindString(text); n != "" {
			return RealIdentifier{Kind: "a full date of birth together with a name", Masked: mask(d, 0),
				Advice: "give an age instead of a date of birth, or leave the name out"}, true
		}
	}
	return RealIdentifier{}, false
}

// nhsCheckDigitValid applies the NHS number's modulus 11 check.
func nhsCheckDigitValid(d string) bool {
	if len(d) != 10 || strings.Count(d, d[:1]) == 10 { // 0000000000 and the like pass the sum
		return false
	}
	sum := 0
	for i := range 9 {
		sum += int(d[i]-'0') * (10 - i)
	}
	check := 11 - sum%11
	if check == 11 {
		check = 0
	}
	return check != 10 && check == int(d[9]-'0')
}

// ssnIssued reports a Social Security number the SSA could have issued:
// area 001–899 but 666, group 01–99, serial 0001–9999; the famous
// advertising numbers are not real people's.
func ssnIssued(area, group, serial string) bool {
	a, _ := strconv.Atoi(area)
	switch {
	case a == 0 || a == 666 || a >= 900, group == "00", serial == "0000":
		return false
	case area+group+serial == "078051120", area+group+serial == "219099999":
		return false
	}
	return true
}

// reservedDomain reports mail domains that can never be anyone's (RFC 2606
// and RFC 6761).
func reservedDomain(d string) bool {
	for _, r := range []string{"example.com", "example.org", "example.net", "example", "test", "invalid", "localhost"} {
		if d == r || strings.HasSuffix(d, "."+r) {
			return true
		}
	}
	return false
}

// realPhone reports a phone-like run of 10 to 15 digits outside the
// numbers set aside for fiction (Ofcom's drama ranges, the US 555-01xx).
func realPhone(s string) bool {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	d := b.String()
	if len(d) < 10 || len(d) > 15 {
		return false
	}
	if strings.HasPrefix(d, "44") {
		d = "0" + d[2:]
	}
	for _, fiction := range []string{"07700900", "01632960", "02079460", "01134960", "01144960", "01214960", "01314960",
		"01514960", "01614960", "02890180", "02920180", "01914980", "03069990", "08081570", "09098790"} {
		if strings.HasPrefix(d, fiction) {
			return false
		}
	}
	if strings.HasPrefix(d, "1") && len(d) == 11 {
		d = d[1:]
	}
	if len(d) == 10 && d[3:7] == "5550" && d[7] == '1' { // NXX-555-01XX
		return false
	}
	if nhsCheckDigitValid(d) && strings.HasPrefix(d, "999") { // an NHS test number is not a phone number
		return false
	}
	return true
}

// mask keeps the last keep characters of s that are not separators.
func mask(s string, keep int) string {
	r := []rune(s)
	shown := 0
	for i := len(r) - 1; i >= 0; i-- {
		switch {
		case r[i] == ' ' || r[i] == '-' || r[i] == '/' || r[i] == '.':
		case shown < keep:
			shown++
		default:
			r[i] = '•'
		}
	}
	return string(r)
}

func maskEmail(s string) string {
	user, domain, _ := strings.Cut(s, "@")
	if len(user) > 1 {
		user = user[:1] + strings.Repeat("•", len(user)-1)
	}
	return user + "@" + domain
}
