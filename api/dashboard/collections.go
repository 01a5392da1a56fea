package dashboard

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/collections"
	"broll/internal/apperr"
	"broll/tenancy"
)

// collectionsPerPage is the page's size: the collections list's default.
const collectionsPerPage = collections.DefaultPageSize

// collectionsView is the collections page: a page of the account's
// collections, newest first, each with the key that made it.
type collectionsView struct {
	Rows []collectionRow
	Keys []tenancy.Key // the key filter's choices
	// KeyID is the filtered key ("" for every key); KeyName names it when
	// Keys does not list it.
	KeyID, KeyName string
	Test           bool
	First          string // the first page, when this is a later one
	Next           string // the next page, when there is one
}

// collectionRow is one collection with the name of its key.
type collectionRow struct {
	collections.Collection
	KeyName    string
	KeyRevoked bool
}

// CollectionsPage lists the account's collections, read-only: the shortlists
// its keys keep over the API and MCP, with the key that made each, its
// clip count and when it last changed; ?api_key_id= narrows it to one key
// of the account. Live collections, unless ?mode=test asks for the test
// keys' ones; pages follow ?cursor=.
func (h *Dashboard) CollectionsPage(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	owner, test, err := modeOwner(c)
	if err != nil {
		return err
	}
	cursor, keyID := strings.TrimSpace(c.Query("cursor")), strings.TrimSpace(c.Query("api_key_id"))
	q := collections.ListQuery{Limit: collectionsPerPage, Cursor: cursor}
	if keyID != "" {
		if q.KeyID, err = uuid.Parse(keyID); err != nil {
			return apperr.InvalidField("api_key_id", "api_key_id %q is not a UUID", apperr.Clip(keyID))
		}
	}
	page, err := h.Collections.List(ctx, owner, q)
	if err != nil {
		return err
	}
	keys, err := h.Tenancy.AccountKeys(ctx, sess.AccountID, keyChoices)
	if err != nil {
		return err
	}
	byID := make(map[uuid.UUID]tenancy.Key, len(keys))
	for _, k := range keys {
		byID[k.ID] = k
	}
	v := collectionsView{Test: test, Keys: keys, KeyID: keyID, Rows: make([]collectionRow, len(page.Collections))}
	if q.KeyID != uuid.Nil {
		v.KeyName = h.keyName(ctx, sess.AccountID, q.KeyID, keys)
	}
	for i, col := range page.Collections {
		k, ok := byID[col.KeyID]
		if !ok {
			// Past the first keyChoices keys: read it once for the page.
			if k, err = h.Tenancy.AccountKey(ctx, sess.AccountID, col.KeyID); err != nil {
				return err
			}
			byID[k.ID] = k
		}
		v.Rows[i] = collectionRow{Collection: col, KeyName: displayName(k), KeyRevoked: k.RevokedAt != nil}
	}
	filter := url.Values{}
	if keyID != "" {
		filter.Set("api_key_id", keyID)
	}
	link := func(cursor string) string {
		q := url.Values{}
		if keyID != "" {
			q.Set("api_key_id", keyID)
		}
		q = modeValues(q, test)
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		if len(q) == 0 {
			return Prefix + "/collections"
		}
		return Prefix + "/collections?" + q.Encode()
	}
	if cursor != "" {
		v.First = link("")
	}
	if page.NextCursor != "" {
		v.Next = link(page.NextCursor)
	}
	return h.show(c, http.StatusOK, "collections", view{
		Title: "Collections", Nav: "collections", Session: sess, Data: v,
		Mode: newModeSwitch(Prefix+"/collections", filter, test),
	})
}
