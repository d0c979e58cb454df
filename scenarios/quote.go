package scenarios

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxQuoted bounds how much of a value a message quotes. Argument values
// come from the model: a runaway reply must not become a multi-megabyte
// refusal that is recorded and sent back with every later request.
const maxQuoted = 100

// quoteShort quotes s as %q does, cut to maxQuoted bytes on a character
// boundary with its full length said when it is longer.
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%q…(%d bytes)", s[:n], len(s))
}
