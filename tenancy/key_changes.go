package tenancy

import (
	"context"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"broll/internal/admission"
	"broll/internal/apperr"
)

// KeyScope bounds the keys one change may reach: the REST API changes and
// revokes the customer keys of the calling root key, the dashboard any key
// of the signed-in account, the operator CLI any key (the zero scope). A
// key outside the scope is not_found, like an unknown one.
type KeyScope struct {
	AccountID uuid.NullUUID
	ParentID  uuid.NullUUID
}

// CustomerKeysOf is the scope of a root key changing its customer keys.
func CustomerKeysOf(root Principal) KeyScope {
	return KeyScope{
		AccountID: uuid.NullUUID{UUID: root.AccountID, Valid: true},
		ParentID:  uuid.NullUUID{UUID: root.KeyID, Valid: true},
	}
}

// KeysOfAccount is the scope of every key of one account.
func KeysOfAccount(accountID uuid.UUID) KeyScope {
	return KeyScope{AccountID: uuid.NullUUID{UUID: accountID, Valid: true}}
}

// KeyChanges changes keys so that every API node sees the change at once:
// the rows commit, then the Redis markers every admission reads (whatever
// a node's auth cache holds) are written, then this process's own auth
// cache forgets the keys. A revocation writes the revocation markers (and
// its key.revoked events, in the rows' transaction); a change of a key's
// settings writes its settings marker. Every surface (the REST API, the
// dashboard, brollctl) changes keys through it, so none can leave a step
// out.
type KeyChanges struct {
	svc    *Service
	rdb    *redis.Client
	prefix string
	// auth is this process's authenticator; nil: no cache to forget.
	auth *Authenticator
}

// NewKeyChanges returns the changes of svc's keys, writing markers under
// prefix in rdb and forgetting changed keys in auth (nil: no cache).
func NewKeyChanges(svc *Service, rdb *redis.Client, prefix string, auth *Authenticator) *KeyChanges {
	return &KeyChanges{svc: svc, rdb: rdb, prefix: prefix, auth: auth}
}

// errSettingsPending is returned when a key's settings are changed but its
// marker could not be written: nodes may go on with their cached settings
// (its rate limit, its label) until a retry, which changes nothing more
// and writes the marker.
var errSettingsPending = apperr.New(apperr.Unavailable,
	"key changed in the database but not yet on every node; retry the request")

// Update changes the settings of customer key id within scope (its label,
// spend limit, rate limit, licensee name) and publishes them. Spend limits
// are checked against Postgres by every purchase, so they hold at once
// whatever a node caches; the rest reach every node with the marker.
func (c *KeyChanges) Update(ctx context.Context, scope KeyScope, id uuid.UUID, u KeyUpdate) (Key, error) {
	k, err := c.svc.updateKey(ctx, id, scope.AccountID, scope.ParentID, u)
	if err != nil {
		return Key{}, err
	}
	// The change is made whether or not the caller is still waiting.
	ctx = context.WithoutCancel(ctx)
	if err := admission.MarkChanged(ctx, c.rdb, c.prefix, k.ID, k.SettingsVersion); err != nil {
		return Key{}, errSettingsPending
	}
	if c.auth != nil {
		c.auth.Forget(k.ID)
	}
	return k, nil
}
