package database

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// ValidText reports whether s can be sent to Postgres as text: valid UTF-8
// without NUL characters. Anything else is refused by the server (SQLSTATE
// 22021), so parsers check client text with it and answer 400 naming the
// field rather than letting the query fail.
func ValidText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// IsInvalidText reports Postgres refusing a text value's bytes: 22021
// (character_not_in_repertoire: invalid UTF-8 or NUL) or 22P05
// (untranslatable_character). Such a value always came from a client.
func IsInvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}
