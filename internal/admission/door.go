package admission

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Door is the admission as the rest of the service uses it: the API edge
// admits each request; the catalog and the purchase batcher hold what they
// change across their commits, so that no node answers from a copy the
// change made stale. *Gate is the one implementation.
type Door interface {
	// Admit decides one request of c and counts it.
	Admit(ctx context.Context, c Caller) (Decision, error)
	// AdmitWithoutCopies is Admit for a request that reads no copies: its
	// pass trusts nothing.
	AdmitWithoutCopies(ctx context.Context, c Caller) (Decision, error)
	// Readmit decides again, under c's new settings, a request Admit (or
	// AdmitWithoutCopies, copies false) found Stale; it was counted
	// already.
	Readmit(ctx context.Context, c Caller, copies bool) (Decision, error)
	// Hold is taken right before the commit of a change to what subjects
	// name, and released after it, committed or not.
	Hold(ctx context.Context, subjects ...Subject) Hold
}

// Caller is what the admission needs of a key: its id and its root's (the
// revocation markers), its own rate limit (0: the service's) and the
// version of its settings the caller read (the settings marker).
type Caller struct {
	KeyID, RootKeyID   uuid.UUID
	RateLimitPerMinute int
	SettingsVersion    int64
}

// Counter keeps the request counts the admission adds to: it names the
// Redis hashes each admitted request is counted in, in the admission's
// round trip, and counts in this process while Redis is away
// (tenancy.Usage, which moves the counts to Postgres).
type Counter interface {
	// CountKeys are the hashes of requests by key id, of the last use
	// (Unix ms) by key id, and of requests by hourField, the field of id's
	// bucket of the hour of now there.
	CountKeys(id uuid.UUID, now time.Time) (total, lastUse, hours, hourField string)
	// CountLocally counts one request of id at now in this process.
	CountLocally(id uuid.UUID, now time.Time)
}

// Subject names something a node may keep copies of: the catalog's clips,
// or what one key owns.
type Subject struct {
	owner uuid.UUID
	owned bool
}

// Catalog is every clip's details: any change to a clip changes it.
var Catalog = Subject{}

// Owned is what key owns: a purchase by the key changes it.
func Owned(key uuid.UUID) Subject { return Subject{owner: key, owned: true} }

// Decision is the outcome of admitting one request.
type Decision struct {
	Revoked    bool
	Allowed    bool
	Limit      int
	Remaining  int
	RetryAfter time.Duration // until the next request is allowed; 0 when allowed
	ResetAfter time.Duration // until the allowance is full again
	// Fallback is true when Redis could not be reached and the decision was
	// made by the in-process limiter of this node.
	Fallback bool
	// Stale is true when the key was changed (PATCH) after the caller's
	// copy of it was read: the caller reads it again from Postgres and
	// admits again, so that the new rate limit applies from this request
	// on.
	Stale bool
	// Pass is what this admission saw of the subjects, before anything the
	// request reads from Postgres (the zero Pass without Redis): the
	// request's reads use copies made under it while it holds.
	Pass Pass
}
