package webhook

import "github.com/google/uuid"

// Owner is who manages endpoints, by the purchases visibility rule: a root
// key sees and manages only the endpoints it made (an account may hold one
// root key per integration, and they must not read, re-key or receive each
// other's customers' events); the account's owners, the dashboard's users
// who run the whole account, see every endpoint of the account.
type Owner struct {
	Account uuid.UUID
	// Key is the root key; uuid.Nil for the account's owners.
	Key uuid.UUID
}

// RootKey is the owner a root key of account is.
func RootKey(account, key uuid.UUID) Owner { return Owner{Account: account, Key: key} }

// AccountOwners are the account's dashboard users: every endpoint of it.
func AccountOwners(account uuid.UUID) Owner { return Owner{Account: account} }

// key is the root key the SQL narrows to, NULL for the account's owners.
func (o Owner) key() uuid.NullUUID { return uuid.NullUUID{UUID: o.Key, Valid: o.Key != uuid.Nil} }
