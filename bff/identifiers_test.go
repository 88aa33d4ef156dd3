package bff

import (
	"strconv"
	"strings"
	"testing"
)

// withCheckDigit completes nine digits into an NHS number with a valid
// modulus 11 check digit, or "" when none exists.
func withCheckDigit(nine string) string {
	sum := 0
	for i := range 9 {
		sum += int(nine[i]-'0') * (10 - i)
	}
	c := 11 - sum%11
	if c == 11 {
		c = 0
	}
	if c == 10 {
		return ""
	}
	return nine + strconv.Itoa(c)
}

func TestRealIdentifiersAreFound(t *testing.T) {
	real := withCheckDigit("943476591") // the shape of NHS Digital's documentation example
	if real == "" {
		t.Fatal("no check digit")
	}
	spaced := real[:3] + " " + real[3:6] + " " + real[6:]
	for kind, texts := range map[string][]string{
		"NHS number":      {"my NHS number is " + spaced, "nhs no: " + real, "NHS " + real[:3] + "-" + real[3:6] + "-" + real[6:]},
		"Social Security": {"SSN 123-45-6789", "my social security number is 212 55 1234", "ssn: 123456789"},
		"email":           {"write to jane.doe@gmail.com please", "J.Smith@nhs.net"},
		"phone":           {"call me on 07911 123456", "my number is +44 7911 123456", "phone (212) 555-7841", "020 7123 4567"},
		"date of birth":   {"My name is John Smith, born 12/03/1980", "Mrs Jane Doe, DOB 4 March 1975"},
	} {
		for _, text := range texts {
			id, ok := FindRealIdentifier(text)
			if !ok {
				t.Errorf("%s not found in %q", kind, text)
				continue
			}
			if !strings.Contains(strings.ToLower(id.Kind), strings.ToLower(strings.Fields(kind)[0])) {
				t.Errorf("%q: found %q, want %s", text, id.Kind, kind)
			}
			if strings.Contains(text, id.Masked) && strings.Count(id.Masked, "•") == 0 {
				t.Errorf("%q: the match is shown whole: %q", text, id.Masked)
			}
		}
	}
}

// The official test and fiction ranges, and ordinary clinical text, pass.
func TestStandInsAndClinicalTextPass(t *testing.T) {
	var test999 string
	for n := 0; test999 == ""; n++ {
		test999 = withCheckDigit("999" + strconv.Itoa(100000+n))
	}
	for _, text := range []string{
		"my NHS number is " + test999,                       // NHS test range
		"NHS 943 476 5910",                                  // wrong check digit: not a real number
		"SSN 987-65-4321", "ssn 000-12-3456", "666-12-3456", // never issued
		"ssn 078-05-1120", // the Woolworth wallet number
		"email me at test.patient@example.com or a@b.test", // reserved domains
		"call 07700 900123", "ring +44 7700 900456", "US: (212) 555-0123", "020 7946 0123",
		"born 12/03/1980",                        // a date alone
		"my name is John Smith",                  // a name alone
		"I have had a sore throat for 3 days",    // ordinary text
		"temperature 38.5, pulse 110, BP 120/80", // numbers that are not identifiers
		"I took 2 x 500 mg paracetamol at 10.30 and 14.30",
		"it started on 2024-03-12 and got worse by 2024-03-15",
		"I'm 42 and weigh 80 kg; my height is 1.80 m",
	} {
		if id, ok := FindRealIdentifier(text); ok {
			t.Errorf("%q refused as %s (%s)", text, id.Kind, id.Masked)
		}
	}
}
