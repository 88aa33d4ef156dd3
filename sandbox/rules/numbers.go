package rules

import "strconv"

func numberWords() map[string]int {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	m := make(map[string]int, 30)
	for i, w := range words {
		m[w] = i
	}
	for i, w := range []string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"} {
		m[w] = 20 + 10*i
	}
	m["hundred"] = 100
	return m
}

// wordsToDigits rewrites number words as digits ("thirty four" → "34") so
// the extractors below only deal with digits.
func (lx *lexicon) wordsToDigits(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	for i := 0; i < len(tokens); i++ {
		n, ok := lx.numbers[tokens[i]]
		if !ok {
			out = append(out, tokens[i])
			continue
		}
		if n >= 20 && n < 100 && i+1 < len(tokens) {
			if u, ok := lx.numbers[tokens[i+1]]; ok && u > 0 && u < 10 {
				n += u
				i++
			}
		}
		out = append(out, strconv.Itoa(n))
	}
	return out
}

func number(tok string) (int, bool) {
	if len(tok) == 0 || len(tok) > 4 {
		return 0, false
	}
	n, err := strconv.Atoi(tok)
	return n, err == nil
}

// durationUnits maps a unit word to days.
func durationUnit(tok string) (float64, bool) {
	switch tok {
	case "minute", "minutes", "min", "mins":
		return 1.0 / 1440, true
	case "hour", "hours", "hr", "hrs":
		return 1.0 / 24, true
	case "day", "days", "night", "nights":
		return 1, true
	case "week", "weeks", "wk", "wks":
		return 7, true
	case "month", "months":
		return 30, true
	case "year", "years", "yr", "yrs":
		return 365, true
	}
	return 0, false
}

func isWeekday(tok string) bool {
	switch tok {
	case "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekend":
		return true
	}
	return false
}

// duration finds how long something has lasted, in days: "3 days",
// "a couple of weeks", "since yesterday", "since Tuesday". A weekday means
// "within the past week" and counts as 7 days, the upper bound, because the
// engine has no calendar (it must not read the clock).
func duration(tokens []string) (days float64, approx string, ok bool) {
	for i, t := range tokens {
		if unit, ok := durationUnit(t); ok {
			if unit == 365 && i+1 < len(tokens) && tokens[i+1] == "old" {
				continue // "34 years old" is an age
			}
			qty, found := quantityBefore(tokens, i)
			if !found {
				if t == "hours" || t == "hrs" {
					return 0, "", true // "for hours"
				}
				if t == "night" && i > 0 && tokens[i-1] == "last" {
					return 1, "", true
				}
				if (t == "week" || t == "month") && i > 0 && tokens[i-1] == "last" {
					return unit, "", true
				}
				continue
			}
			days := qty * unit
			if lessThan(tokens, i) && days >= 1 {
				days--
			}
			return days, "", true
		}
		switch {
		case t == "yesterday":
			return 1, "", true
		case t == "today" || t == "tonight" || t == "morning" && i > 0 && tokens[i-1] == "this":
			return 0, "", true
		case (t == "since" || t == "on" || t == "last") && i+1 < len(tokens) && isWeekday(tokens[i+1]):
			return 7, "within the past week", true
		case (t == "since" || t == "last") && i+2 < len(tokens) && tokens[i+1] == "the" && isWeekday(tokens[i+2]):
			return 7, "within the past week", true
		}
	}
	return 0, "", false
}

// quantityBefore reads the amount in front of a unit: "3", "a", "couple of",
// "few" or "several" (3, as the quick reply "A few days"), "2 to 3" or
// "2 or 3" (a range of figures: the upper one wins). "A day or two" is
// the idiom "about a day" (the rash protocol's quick reply, worded
// "since yesterday" by a voice): 1.
func quantityBefore(tokens []string, unit int) (float64, bool) {
	j := unit - 1
	if j >= 0 && tokens[j] == "of" {
		j--
	}
	if j < 0 {
		return 0, false
	}
	switch tokens[j] {
	case "a", "an":
		return 1, true
	case "couple":
		return 2, true
	case "few", "several":
		// "several days" is the plain quick reply "A few days".
		return 3, true
	}
	if n, ok := number(tokens[j]); ok {
		return float64(n), true
	}
	return 0, false
}

func lessThan(tokens []string, unit int) bool {
	for j := unit - 1; j >= 0 && j >= unit-4; j-- {
		if tokens[j] == "less" || tokens[j] == "under" || tokens[j] == "within" {
			return true
		}
	}
	return false
}

// volunteeredAge finds an age stated in passing: "I'm 34", "34 years old",
// "aged 34", "age 34", "34yo".
func volunteeredAge(tokens []string) (int, bool) {
	for i, t := range tokens {
		n, ok := number(t)
		if !ok || n > 130 {
			continue
		}
		next := func(k int) string {
			if i+k < len(tokens) {
				return tokens[i+k]
			}
			return ""
		}
		prev := func(k int) string {
			if i-k >= 0 {
				return tokens[i-k]
			}
			return ""
		}
		if _, unit := durationUnit(next(1)); unit && next(1) != "year" && next(1) != "years" && next(1) != "yr" && next(1) != "yrs" {
			continue
		}
		switch {
		case (next(1) == "years" || next(1) == "year" || next(1) == "yrs" || next(1) == "yr") && next(2) == "old":
			return n, true
		case next(1) == "yo" || next(1) == "y" && next(2) == "o":
			return n, true
		case prev(1) == "aged" || prev(1) == "age" || prev(1) == "is" && prev(2) == "age":
			return n, true
		case (prev(1) == "im" || prev(1) == "am" && prev(2) == "i") && next(1) != "years" && next(1) != "year":
			return n, true
		}
	}
	return 0, false
}

// answeredAge reads the reply to "How old are you?": the first plausible
// number that is not a duration.
func answeredAge(tokens []string) (int, bool) {
	if n, ok := volunteeredAge(tokens); ok {
		return n, true
	}
	for i, t := range tokens {
		n, ok := number(t)
		if !ok || n > 130 {
			continue
		}
		if i+1 < len(tokens) {
			if _, unit := durationUnit(tokens[i+1]); unit {
				continue
			}
		}
		return n, true
	}
	return 0, false
}
