package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"broll/internal/apperr"
)

// maxJSONDepth bounds how deep uniqueNames follows a body: encoding/json's
// own limit, so that nothing the decoder would read goes unchecked.
const maxJSONDepth = 10000

// uniqueNames refuses JSON in which one object names a member twice, also
// when the two names are equal once case is folded ("video_ids" and
// "VIDEO_IDS", or a name and its \u-escaped spelling): encoding/json
// matches struct fields regardless of case and keeps the last of
// duplicates, while other readers (a proxy, a log, a client library) may
// keep the first, so such a body has no one meaning and is 400, naming the
// member. Malformed JSON is left to the decoder that reads the body next,
// which reports it with its offset. One pass over the bytes holds one
// folded name per member of the open objects: memory stays within a small
// multiple of the body, which the body limit bounds.
func uniqueNames(body []byte) error {
	if !json.Valid(body) {
		return nil // the decoder says where
	}
	// The frames are reused as objects close and open: their name lists
	// keep their room.
	var stack []jsonFrame
	top := func() *jsonFrame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case ' ', '\t', '\r', '\n', ':', ',':
		case '{', '[':
			if len(stack) == maxJSONDepth {
				return apperr.New(apperr.Invalid, "malformed JSON: nested more than %d levels deep", maxJSONDepth)
			}
			if len(stack) < cap(stack) {
				stack = stack[:len(stack)+1]
				f := top()
				*f = jsonFrame{names: f.names[:0]}
			} else {
				stack = append(stack, jsonFrame{})
			}
			f := top()
			f.object, f.keyNext = c == '{', true
		case '}', ']':
			stack = stack[:len(stack)-1]
			top().valueDone()
		case '"':
			end := stringEnd(body, i)
			if f := top(); f != nil && f.object && f.keyNext {
				if err := f.add(stack, memberName(body[i:end+1])); err != nil {
					return err
				}
			} else {
				f.valueDone()
			}
			i = end
		default: // a number, true, false or null
			for i+1 < len(body) && !strings.ContainsRune(" \t\r\n,]}", rune(body[i+1])) {
				i++
			}
			top().valueDone()
		}
	}
	return nil
}

// stringEnd is the index of the quote that closes the string opening at
// start, in valid JSON.
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b) - 1
}

// memberName decodes a quoted name as the decoder does (escapes resolved,
// bytes that are not UTF-8 read as U+FFFD).
func memberName(quoted []byte) string {
	raw := quoted[1 : len(quoted)-1]
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(raw)
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // valid: json.Valid passed
	return s
}

// jsonFrame is one open object or array of uniqueNames.
type jsonFrame struct {
	object bool
	// keyNext: the next string of an object is a member name.
	keyNext bool
	// names are the members so far, folded, with their spelling; an
	// object with many members indexes them (index).
	names []foldedName
	index map[string]string
	// key is the member being read; n counts an array's elements read.
	key string
	n   int
}

type foldedName struct{ folded, name string }

// indexFrom is the member count from which an object's names are looked
// up in a map rather than a list.
const indexFrom = 16

// add records a member name of f, the last of stack (the open frames,
// which name it in an error).
func (f *jsonFrame) add(stack []jsonFrame, name string) error {
	folded := foldName(name)
	first, seen := f.index[folded]
	if f.index == nil {
		for _, n := range f.names {
			if n.folded == folded {
				first, seen = n.name, true
				break
			}
		}
	}
	if seen {
		path := memberPath(stack, name)
		if first == name {
			return apperr.InvalidField(path, "member %q is given twice; give each member once", apperr.Clip(path))
		}
		return apperr.InvalidField(path, "member %q is given twice, as %q and %q (names are matched regardless of case); give each member once",
			apperr.Clip(path), apperr.Clip(first), apperr.Clip(name))
	}
	switch {
	case f.index != nil:
		f.index[folded] = name
	case len(f.names) < indexFrom:
		f.names = append(f.names, foldedName{folded, name})
	default:
		f.index = make(map[string]string, 2*indexFrom)
		for _, n := range f.names {
			f.index[n.folded] = n.name
		}
		f.index[folded] = name
		f.names = nil
	}
	f.key, f.keyNext = name, false
	return nil
}

// valueDone records that a value of the frame (a member's or an array
// element) was read whole.
func (f *jsonFrame) valueDone() {
	if f == nil {
		return
	}
	if f.object {
		f.keyNext = true
		return
	}
	f.n++
}

// framePath names the value of the last of stack in messages
// ("spend_limit", "items[2]", "" at the top). It is built only for an
// error: each parent's key and n still name the slot being read.
func framePath(stack []jsonFrame) string {
	var b strings.Builder
	for i := range len(stack) - 1 {
		p := &stack[i]
		if p.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p.key)
		} else {
			b.WriteString("[" + strconv.Itoa(p.n) + "]")
		}
	}
	return b.String()
}

// memberPath names member name of the last of stack.
func memberPath(stack []jsonFrame, name string) string {
	if p := framePath(stack); p != "" {
		return p + "." + name
	}
	return name
}

// foldName maps every rune to one representative of its simple
// case-folding orbit (the lower-case letter for ASCII, otherwise the
// orbit's smallest rune, lowered when that is ASCII), so that foldName(a)
// == foldName(b) exactly when strings.EqualFold(a, b), the equality
// encoding/json matches names by. A name in lower-case ASCII is returned
// as it is, without a copy.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf {
			return unicode.ToLower(r)
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		if least < utf8.RuneSelf {
			return unicode.ToLower(least)
		}
		return least
	}, s)
}
