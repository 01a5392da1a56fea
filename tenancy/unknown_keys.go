package tenancy

import "time"

// unknownKeys remembers, for a short time, key hashes that Postgres did not
// know, so that a flood of random well-formed keys costs one query per key
// rather than one per request. It is bounded: when full, the oldest entry
// makes room (first in, first out). A key created after the miss cannot be
// in it unless someone guessed its 256-bit secret beforehand; it is still
// cleared whenever this node creates a key, and with the auth cache when
// Redis loses its data. Not safe for concurrent use: the Authenticator's
// mutex guards it.
type unknownKeys struct {
	ttl  time.Duration
	seen map[string]unknownEntry
	ring []string // hashes in insertion order; ring[next] is the oldest once full
	next int
}

type unknownEntry struct {
	expires time.Time
	slot    int
}

// maxUnknownKeys bounds the memory of the negative cache (about 100 bytes an
// entry).
const maxUnknownKeys = 10_000

// maxUnknownTTL keeps a miss from being remembered longer than this, whatever
// the positive cache's lifetime.
const maxUnknownTTL = 30 * time.Second

func newUnknownKeys(ttl time.Duration) unknownKeys {
	return unknownKeys{ttl: min(ttl, maxUnknownTTL), seen: map[string]unknownEntry{}}
}

func (u *unknownKeys) has(hash string, now time.Time) bool {
	e, ok := u.seen[hash]
	return ok && now.Before(e.expires)
}

func (u *unknownKeys) add(hash string, now time.Time) {
	if u.ttl <= 0 {
		return
	}
	if e, ok := u.seen[hash]; ok {
		u.seen[hash] = unknownEntry{expires: now.Add(u.ttl), slot: e.slot}
		return
	}
	slot := len(u.ring)
	if slot < maxUnknownKeys {
		u.ring = append(u.ring, hash)
	} else {
		slot = u.next
		if old := u.ring[slot]; u.seen[old].slot == slot {
			delete(u.seen, old)
		}
		u.ring[slot] = hash
		u.next = (u.next + 1) % maxUnknownKeys
	}
	u.seen[hash] = unknownEntry{expires: now.Add(u.ttl), slot: slot}
}

func (u *unknownKeys) clear() {
	clear(u.seen)
	u.ring = u.ring[:0]
	u.next = 0
}
