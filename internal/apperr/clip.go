package apperr

// MaxEcho is how many characters of a value a client sent an error may
// repeat (a field name, an id, a scope, a query value, an enum value).
// MaxDetail bounds a whole message, should a value reach one uncut.
const (
	MaxEcho   = 100
	MaxDetail = 1000
)

// Clip is what an error repeats of a value a client sent: the value when it
// has at most MaxEcho characters, else its first MaxEcho and "…". Every
// error that names a client's value goes through it, so that a 1 MB field
// name makes a small answer (which the idempotency store may keep for a
// day), never a 2 MB one.
func Clip(s string) string { return clip(s, MaxEcho) }

// clip cuts s after n characters (runes; a byte that is not UTF-8 counts as
// one), marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}
