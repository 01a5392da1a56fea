// Package marks tells every node, through Redis, that something it may
// hold a copy of changed in Postgres: the catalog's clips, or what one key
// owns. A mark is a random token under a name; a writer holds the name
// while its transaction commits (Hold) and gives it a new token once it
// has committed (Release). A node copies what it reads from Postgres
// together with the token it saw before the read, and uses the copy only
// while the token is the same and nobody holds the name.
//
// Why this is exact: a copy made under token T holds what Postgres had
// after T was read. A change committed after that was held before its
// commit, and holding writes a new token, so no admission sees T again
// after the hold; while the name is held, nodes read Postgres and keep no
// copy, so a writer that dies between its commit and its Release leaves
// the name held until HoldFor has passed, long after its transaction
// ended. The admission script reads marks with the rate limit and the
// revocation markers (package admission, the only one that imports this
// one), so using them costs no round trip.
package marks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// HoldFor is how long a hold lasts when its writer never releases it (it
// died, or lost Redis): far longer than a commit, and than a purchase
// batch, which gives up after 30 s.
const HoldFor = 2 * time.Minute

// tokenTTL is how long a token lasts once written (seconds): one that
// lapsed is written anew by the next admission, which only makes the
// copies made under it stale, so a key nobody uses leaves Redis.
const tokenTTL = "604800"

// Catalog is the name of the mark of every clip's details: a change to
// any clip gives it a new token.
const Catalog = "catalog"

// Owned is the name of the mark of what key owns: a purchase by the key
// gives it a new token.
func Owned(key uuid.UUID) string { return "owned:" + key.String() }

// TokenKey is the Redis key of a mark's token.
func TokenKey(prefix, name string) string { return prefix + "mark:" + name }

// HeldKey is the Redis key of a mark's holds: a sorted set of holders by
// the Unix time (ms) at which their hold lapses.
func HeldKey(prefix, name string) string { return prefix + "mark:" + name + ":held" }

// ReadLua defines read_mark(token_key, held_key, offered, now_ms) for an
// admission script: the mark's token, or false while the mark is held.
// A missing token (a new deployment, Redis lost its data) becomes offered.
// false too where SET NX GET is unknown (Redis before 7): then nothing is
// copied.
const ReadLua = `
local function read_mark(token_key, held_key, offered, now_ms)
  if redis.call("ZCOUNT", held_key, now_ms, "+inf") > 0 then
    return false
  end
  local tok = redis.pcall("SET", token_key, offered, "NX", "GET", "EX", ` + tokenTTL + `)
  if type(tok) == "table" and tok.err then
    return false
  end
  if not tok then
    return offered
  end
  return tok
end
`

// holdScript holds marks: KEYS each mark's token and holds, in pairs; ARGV
// holder, hold (ms), then a new token per mark. The new token makes every
// copy made before it stale. One call holds every mark of a change (a
// purchase batch holds what each of its buyers owns).
var holdScript = redis.NewScript(`
local t = redis.call("TIME")
local now = t[1] * 1000 + math.floor(t[2] / 1000)
for i = 1, #KEYS, 2 do
  local held = KEYS[i + 1]
  redis.call("ZREMRANGEBYSCORE", held, "-inf", now)
  redis.call("ZADD", held, now + tonumber(ARGV[2]), ARGV[1])
  redis.call("PEXPIRE", held, ARGV[2])
  redis.call("SET", KEYS[i], ARGV[2 + (i + 1) / 2], "EX", ` + tokenTTL + `)
end
return 1
`)

// releaseScript ends a hold and gives each mark a new token: copies made
// while the change was committing are stale too. KEYS each mark's token
// and holds, in pairs; ARGV holder, then a new token per mark.
var releaseScript = redis.NewScript(`
for i = 1, #KEYS, 2 do
  redis.call("ZREM", KEYS[i + 1], ARGV[1])
  redis.call("SET", KEYS[i], ARGV[1 + (i + 1) / 2], "EX", ` + tokenTTL + `)
end
return 1
`)

// Marks writes the marks of one deployment (its Redis key prefix).
type Marks struct {
	rdb    *redis.Client
	prefix string
	logger *slog.Logger
	// stop ends the background retries (Close); retries counts them.
	stop    chan struct{}
	once    sync.Once
	retries sync.WaitGroup
}

// MarksOptions are the settings of the marks.
type MarksOptions struct {
	// Logger reports the holds whose release failed (they lapse after
	// HoldFor).
	Logger *slog.Logger
}

// New returns the marks under prefix on rdb; Close stops what they retry
// in the background.
func New(rdb *redis.Client, prefix string, o MarksOptions) *Marks {
	return &Marks{rdb: rdb, prefix: prefix, logger: o.Logger, stop: make(chan struct{})}
}

// Close stops the background retries and waits for them: the process is
// ending, and the holds it could not release lapse after HoldFor.
func (m *Marks) Close() {
	m.once.Do(func() { close(m.stop) })
	m.retries.Wait()
}

// Hold is a writer's hold on some marks, taken just before its commit.
type Hold struct {
	m      *Marks
	holder string
	names  []string
	// held is whether Redis took the hold (Lapse).
	held bool
}

// Hold holds the named marks: call it right before the commit of a change
// to what they name, and Release after it, committed or not. A nil Marks
// holds nothing (a graph without Redis, whose nodes copy nothing). When
// Redis cannot be reached the change goes on: nodes that reach Redis are
// told by the Release, or a retry of it (see Release).
func (m *Marks) Hold(ctx context.Context, names ...string) Hold {
	h := Hold{m: m, holder: Token(), names: names}
	if m == nil || len(names) == 0 {
		return h
	}
	args := append(make([]any, 0, 2+len(names)), h.holder, HoldFor.Milliseconds())
	for range names {
		args = append(args, Token())
	}
	if err := holdScript.Run(ctx, m.rdb, m.keys(names), args...).Err(); err != nil {
		m.logger.Warn("marks: could not hold before a change; releasing after it", "marks", names, "error", err.Error())
		return h
	}
	h.held = true
	return h
}

// Taken reports whether Redis took the hold: one it did not take keeps no
// node from trusting its copies, and only the release ends them.
func (h Hold) Taken() bool { return h.held }

// keys are the Redis keys of names' tokens and holds, in pairs.
func (m *Marks) keys(names []string) []string {
	keys := make([]string, 0, 2*len(names))
	for _, n := range names {
		keys = append(keys, TokenKey(m.prefix, n), HeldKey(m.prefix, n))
	}
	return keys
}

// Release ends the hold and gives each mark a new token. A release Redis
// does not take now is retried in the background for HoldFor, as the
// nodes' copies must not outlive the change.
func (h Hold) Release(ctx context.Context) {
	if h.m == nil || len(h.names) == 0 {
		return
	}
	// The change is made whether or not its caller is still waiting.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := h.m.release(ctx, h.names, h.holder); err != nil {
		h.m.retries.Add(1)
		go h.m.retry(h.names, h.holder)
	}
}

// Lapse ends the hold without releasing it, for a change whose commit may
// or may not have landed (its connection was lost while it committed, and
// the server may still be committing it): the marks stay held until
// HoldFor has passed, long after the transaction ended either way, and no
// node copies under them meanwhile, as when a writer dies before its
// release. A release now could come before a late commit lands: nodes
// would copy what was there before it under the new token and trust that
// copy until the next change. A hold Redis never took has nothing to
// lapse, so it is released as Release does.
func (h Hold) Lapse(ctx context.Context) {
	if h.m == nil || len(h.names) == 0 {
		return
	}
	if !h.held {
		h.Release(ctx)
		return
	}
	h.m.logger.Warn("marks: a change's commit is unconfirmed; its hold lapses by itself",
		"marks", h.names, "lapses_in", HoldFor.String())
}

func (m *Marks) release(ctx context.Context, names []string, holder string) error {
	args := append(make([]any, 0, 1+len(names)), holder)
	for range names {
		args = append(args, Token())
	}
	return releaseScript.Run(ctx, m.rdb, m.keys(names), args...).Err()
}

// retry releases names until Redis takes it or HoldFor has passed.
func (m *Marks) retry(names []string, holder string) {
	defer m.retries.Done()
	deadline := time.Now().Add(HoldFor)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-m.stop:
			m.logger.Warn("marks: stopped before a release got through; the hold lapses by itself", "marks", names)
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := m.release(ctx, names, holder)
		cancel()
		if err == nil {
			return
		}
	}
	m.logger.Error("marks: could not release after a change", "marks", names)
}

// Token is a new random token (also what an admission offers for a
// missing mark).
func Token() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Seen are the marks one admission read: "" where the mark was held or
// could not be read, and nothing may be copied or trusted.
type Seen struct {
	Catalog string
	Owned   string
}
