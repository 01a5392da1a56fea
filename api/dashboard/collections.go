package dashboard

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/collections"
	"broll/tenancy"
)

// collectionsPerPage is the page's size: the collections list's default.
const collectionsPerPage = collections.DefaultPageSize

// collectionsView is the collections page: a page of the account's
// collections, newest first, each with the key that made it.
type collectionsView struct {
	Rows  []collectionRow
	Test  bool
	First string // the first page, when this is a later one
	Next  string // the next page, when there is one
}

// collectionRow is one collection with the name of its key.
type collectionRow struct {
	collections.Collection
	KeyName    string
	KeyRevoked bool
}

// CollectionsPage lists the account's collections, read-only: the shortlists
// its keys keep over the API and MCP, with the key that made each, its
// clip count and when it last changed. Live collections, unless
// ?mode=test asks for the test keys' ones; pages follow ?cursor=.
func (h *Dashboard) CollectionsPage(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	test, err := readMode(c)
	if err != nil {
		return err
	}
	owner := tenancy.AccountOwner(sess.AccountID)
	owner.Test = test
	cursor := strings.TrimSpace(c.Query("cursor"))
	page, err := h.Collections.List(ctx, owner, collections.ListQuery{Limit: collectionsPerPage, Cursor: cursor})
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
	v := collectionsView{Test: test, Rows: make([]collectionRow, len(page.Collections))}
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
	link := func(cursor string) string {
		q := modeValues(url.Values{}, test)
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
		Mode: newModeSwitch(Prefix+"/collections", nil, test),
	})
}
