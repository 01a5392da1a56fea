package api

import (
	"errors"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	segjson "github.com/segmentio/encoding/json"

	"broll/catalog"
)

// A clip's Video object, for a key that does not own it and outside a
// semantic search, is made of the clip's row alone (and the node's public
// address): two reads of one clip at one row version (catalog.Video's
// Version) give the same bytes. So a node keeps each clip's object as JSON
// under its row's version and writes it into every page it appears on
// (videoList's appendJSON), instead of encoding it again. An owned clip carries its
// buyer's download link and a semantic result its similarity: those are
// encoded every time.

const (
	// maxClipFragments bounds the memory of the fragments (under a
	// kilobyte each); past it they start again from empty.
	maxClipFragments = 20_000
	// clipFragmentTTL bounds a fragment's life, as the catalog's copies
	// are bounded: far below the time Postgres takes to reuse a row
	// version's transaction id.
	clipFragmentTTL = 10 * time.Minute
)

// clipFragments is this node's encoded Video objects, by clip.
type clipFragments struct {
	mu sync.RWMutex
	m  map[uuid.UUID]clipFragment
}

type clipFragment struct {
	version uint32
	b       []byte
	expires time.Time
}

func newClipFragments() *clipFragments { return &clipFragments{m: map[uuid.UUID]clipFragment{}} }

// of returns j as JSON when it is made of v's row alone (v read at a known
// version, unowned, without a similarity), from the fragment of v's
// version or encoded now and kept; nil otherwise, and then j is encoded
// with the page.
func (f *clipFragments) of(v catalog.Video, j *videoJSON, now time.Time) []byte {
	if f == nil || v.Version == 0 || v.Similarity != nil || j.Owned {
		return nil
	}
	f.mu.RLock()
	e, ok := f.m[v.ID]
	f.mu.RUnlock()
	if ok && e.version == v.Version && now.Before(e.expires) {
		return e.b
	}
	b, err := segjson.Marshal(j)
	if err != nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.m[v.ID]; !ok && len(f.m) >= maxClipFragments {
		clear(f.m)
	}
	f.m[v.ID] = clipFragment{version: v.Version, b: b, expires: now.Add(clipFragmentTTL)}
	return b
}

// videoList is a page of Video objects.
type videoList []videoJSON

// jsonFlags are the app's encoder's (segjson.Marshal's): what
// encoding/json writes.
const jsonFlags = segjson.EscapeHTML | segjson.SortMapKeys

// appendJSON writes the page as json.Marshal does, each object from its
// fragment where it has one (clipFragments): the same bytes either way
// (TestVideoListEncodesAsItsObjects). Written straight into the answer,
// the fragments are not parsed again, as a json.Marshaler's output is.
func (l videoList) appendJSON(b []byte) ([]byte, error) {
	if l == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range l {
		if i > 0 {
			b = append(b, ',')
		}
		if l[i].encoded != nil {
			b = append(b, l[i].encoded...)
			continue
		}
		var err error
		if b, err = segjson.Append(b, &l[i], jsonFlags); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendJSON writes the list answer as json.Marshal does, its clips by
// videoList's appendJSON.
func (l *brollListJSON) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"videos":`...)
	b, err := l.Videos.appendJSON(b)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"pagination":`...)
	if b, err = segjson.Append(b, &l.Pagination, jsonFlags); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSON writes the collection answer as json.Marshal does: the
// collection's own fields, then its items by videoList's appendJSON.
func (l *collectionItemsJSON) appendJSON(b []byte) ([]byte, error) {
	b, err := segjson.Append(b, &l.collectionJSON, jsonFlags)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[len(b)-1] != '}' || b[len(b)-2] == '{' {
		return nil, errors.New("api: a collection encoded without fields")
	}
	b = append(b[:len(b)-1], `,"items":`...)
	if b, err = l.Items.appendJSON(b); err != nil {
		return nil, err
	}
	b = append(b, `,"pagination":`...)
	if b, err = segjson.Append(b, &l.Pagination, jsonFlags); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// sendJSON answers with what appendJSON writes, as c.JSON would.
func sendJSON(c *fiber.Ctx, size int, appendJSON func([]byte) ([]byte, error)) error {
	b, err := appendJSON(make([]byte, 0, size))
	if err != nil {
		return err
	}
	c.Response().SetBodyRaw(b)
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}

// encodedSize is about the size of the answer holding videos.
func encodedSize(videos videoList) int {
	n := 512
	for i := range videos {
		n += len(videos[i].encoded) + 1
	}
	return n
}
