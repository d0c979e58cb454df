package scenarios

import (
	"regexp"
	"strings"
)

// quotedText finds the texts an expectation quotes ("the dialog says
// "Saved""), in straight or curly double quotes.
var quotedText = regexp.MustCompile(`"([^"]+)"|“([^”]+)”`)

// QuotedTexts returns the texts an expectation quotes, in order. A
// check_expectation that quotes text can be judged by reading the screen,
// so a scripted one needs no model.
func QuotedTexts(expectation string) []string {
	var quotes []string
	for _, m := range quotedText.FindAllStringSubmatch(expectation, -1) {
		if q := strings.TrimSpace(m[1] + m[2]); q != "" {
			quotes = append(quotes, q)
		}
	}
	return quotes
}

// ChecksReadable reports whether a scripted scenario has check_expectation
// steps and every one of them quotes text, so OCR can judge them all
// without a model: check_expectation is then offered without one.
func (s *Scenario) ChecksReadable() bool {
	if s.Goal != "" {
		return false
	}
	found := false
	for _, st := range s.Steps {
		if st.Tool != "check_expectation" {
			continue
		}
		expectation, _ := st.Args["expectation"].(string)
		if len(QuotedTexts(expectation)) == 0 {
			return false
		}
		found = true
	}
	return found
}
