package web

import (
	"strings"

	"github.com/mssola/useragent"
)

// deviceOf is a browser's User-Agent in short words for the sessions
// pages ("Firefox on Linux", "Chrome on Android"), or "Unknown device". At
// most 80 characters: a header is the client's to fill.
func deviceOf(ua string) string {
	if ua == "" {
		return "Unknown device"
	}
	if len(ua) > 512 {
		ua = ua[:512]
	}
	p := useragent.New(ua)
	browser, _ := p.Browser()
	os := p.OSInfo().Name
	if p.Bot() {
		browser = "Bot"
	}
	switch {
	case strings.Contains(ua, "iPhone"):
		os = "iPhone"
	case strings.Contains(ua, "iPad"):
		os = "iPad"
	case os == "Mac OS X" || os == "macOS":
		os = "Mac"
	}
	var words string
	switch {
	case browser != "" && os != "":
		words = browser + " on " + os
	case browser != "":
		words = browser
	case os != "":
		words = "A browser on " + os
	default:
		return "Unknown device"
	}
	words = strings.ToValidUTF8(words, "?")
	if r := []rune(words); len(r) > 80 {
		words = string(r[:80]) + "…"
	}
	return words
}
