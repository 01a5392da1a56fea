package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode"

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
// member. Syntax errors are left to the decoder that reads the body next,
// which reports them with their offset. It holds one folded name per
// member of the open objects: memory stays within a small multiple of the
// body, which the body limit bounds, and depth within maxJSONDepth.
func uniqueNames(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*jsonFrame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // malformed: the decoder says where
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if name, ok := tok.(string); ok && top != nil && top.object && top.keyNext {
			if err := top.add(name); err != nil {
				return err
			}
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) == maxJSONDepth {
				return apperr.New(apperr.Invalid, "malformed JSON: nested more than %d levels deep", maxJSONDepth)
			}
			stack = append(stack, &jsonFrame{object: tok == json.Delim('{'), keyNext: true, path: top.childPath()})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				continue
			}
			top = stack[len(stack)-1]
		}
		top.valueDone()
	}
}

// jsonFrame is one open object or array of uniqueNames.
type jsonFrame struct {
	object bool
	// keyNext: the next string of an object is a member name.
	keyNext bool
	// path names this value in messages: "spend_limit", "items[2]".
	path string
	// names maps each member name so far, folded, to its spelling.
	names map[string]string
	// key is the member being read; n counts an array's elements.
	key string
	n   int
}

func (f *jsonFrame) add(name string) error {
	folded := foldName(name)
	if first, seen := f.names[folded]; seen {
		path := f.memberPath(name)
		if first == name {
			return apperr.InvalidField(path, "member %q is given twice; give each member once", apperr.Clip(path))
		}
		return apperr.InvalidField(path, "member %q is given twice, as %q and %q (names are matched regardless of case); give each member once",
			apperr.Clip(path), apperr.Clip(first), apperr.Clip(name))
	}
	if f.names == nil {
		f.names = map[string]string{}
	}
	f.names[folded] = name
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

// childPath is the path of the value that starts now inside f ("" at the
// top).
func (f *jsonFrame) childPath() string {
	switch {
	case f == nil:
		return ""
	case f.object:
		return f.memberPath(f.key)
	default:
		return f.path + "[" + strconv.Itoa(f.n) + "]"
	}
}

func (f *jsonFrame) memberPath(name string) string {
	if f.path == "" {
		return name
	}
	return f.path + "." + name
}

// foldName maps every rune to the smallest rune of its simple case-folding
// orbit, so that foldName(a) == foldName(b) exactly when
// strings.EqualFold(a, b), the equality encoding/json matches names by.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII {
			if 'a' <= r && r <= 'z' {
				return r - 'a' + 'A'
			}
			return r
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}
