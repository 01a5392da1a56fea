package idempotency

import (
	"encoding/hex"

	"github.com/google/uuid"
)

// MaxBody is the most of an answer the store keeps (64 KiB, before
// sealing). Answers are far smaller by design (a 50-clip purchase is about
// 25 KiB, and no error repeats more than a short prefix of what a client
// sent); one past it is not kept: its row records the status only, so the
// request still never runs twice, and a replay is told the answer is gone
// (Response.Kept false).
const MaxBody = 64 << 10

// purpose binds a sealed answer to its row: the API key, the
// Idempotency-Key and the request, so an answer copied into another row
// does not open there.
func purpose(keyID uuid.UUID, key string, hash []byte) string {
	return "idempotent-replay\x00" + keyID.String() + "\x00" + key + "\x00" + hex.EncodeToString(hash)
}

// sealBody is what the body column keeps for an answer: the answer sealed,
// or nil (the column's NULL) for one over MaxBody.
func (s *Store) sealBody(keyID uuid.UUID, key string, hash, body []byte) []byte {
	if len(body) > MaxBody {
		return nil
	}
	if body == nil {
		body = []byte{}
	}
	return []byte(s.sealer.Seal(purpose(keyID, key, hash), body))
}

// openBody is the answer a finished row keeps; false when it keeps none (too
// large, scrubbed when sealing came in, or sealed under a server secret that
// is no longer configured).
func (s *Store) openBody(keyID uuid.UUID, key string, hash, stored []byte) ([]byte, bool) {
	if stored == nil {
		return nil, false
	}
	body, err := s.sealer.Open(purpose(keyID, key, hash), string(stored))
	if err != nil {
		return nil, false
	}
	return body, true
}
