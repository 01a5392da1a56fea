package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/money"
	"broll/tenancy"
)

type keysView struct {
	Roots     []tenancy.RootKey
	CSRFToken string
}

// Keys lists the account's root keys.
func (h *Dashboard) Keys(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	h.flushUsage(c)
	roots, err := h.Tenancy.ListRootKeys(ctx, sess.AccountID)
	if err != nil {
		return err
	}
	return h.show(c, http.StatusOK, "keys", view{
		Title: "API keys", Nav: "keys", Session: sess, Notice: notices[c.Query("m")],
		Data: keysView{Roots: roots, CSRFToken: sess.CSRFToken},
	})
}

// keyRoute reads what a key route works with: its context, the session and
// the :id. Something that is not a UUID names no key of this account:
// not_found, like another account's key.
func keyRoute(c *fiber.Ctx) (context.Context, *tenancy.Session, uuid.UUID, error) {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return nil, nil, uuid.Nil, apperr.NotFoundf("key not found")
	}
	return c.UserContext(), session(c), id, nil
}

type createdView struct {
	Key    tenancy.IssuedKey
	Root   *tenancy.Key // the root of a new customer key
	Back   string
	IsRoot bool
}

// CreateRootKey issues a root key and shows it, once, in the response to
// the form: it is never stored nor shown again.
func (h *Dashboard) CreateRootKey(c *fiber.Ctx) error {
	sess := session(c)
	k, err := h.Tenancy.CreateRootKey(c.UserContext(), sess.AccountID, c.FormValue("label"))
	if err != nil {
		return err
	}
	h.Logger.Info("dashboard: root key created", "request_id", h.RequestID(c), "account_id", sess.AccountID,
		"user_id", sess.UserID, "key_id", k.ID)
	return h.show(c, http.StatusCreated, "keycreated", view{
		Title: "New root key", Nav: "keys", Session: sess,
		Data: createdView{Key: k, Back: Prefix + "/keys", IsRoot: true},
	})
}

type rootKeyView struct {
	Root      tenancy.Key
	Customers tenancy.CustomerKeyPage
	Pager     pager
	CSRFToken string
}

const customerKeysPerPage = 50

// RootKey shows one root key and its customer keys.
func (h *Dashboard) RootKey(c *fiber.Ctx) error {
	ctx, sess, id, err := keyRoute(c)
	if err != nil {
		return err
	}
	h.flushUsage(c)
	root, err := h.Tenancy.AccountKey(ctx, sess.AccountID, id)
	if err != nil {
		return err
	}
	if root.Kind != tenancy.KindRoot {
		return apperr.NotFoundf("root key not found")
	}
	page := pageNumber(c.Query("page"))
	customers, err := h.Tenancy.CustomerKeysOf(ctx, sess.AccountID, id, customerKeysPerPage, (page-1)*customerKeysPerPage)
	if err != nil {
		return err
	}
	path := Prefix + "/keys/" + id.String()
	return h.show(c, http.StatusOK, "rootkey", view{
		Title: "Root key " + displayName(root), Nav: "keys", Session: sess, Notice: notices[c.Query("m")],
		Data: rootKeyView{Root: root, Customers: customers, CSRFToken: sess.CSRFToken,
			Pager: newPager(path, url.Values{}, customers.Total, customerKeysPerPage, page)},
	})
}

// CreateCustomerKey creates a customer key under one of the account's root
// keys through the same code as POST /api/v1/keys.
func (h *Dashboard) CreateCustomerKey(c *fiber.Ctx) error {
	ctx, sess, id, err := keyRoute(c)
	if err != nil {
		return err
	}
	root, err := h.Tenancy.RootPrincipal(ctx, sess.AccountID, id)
	if err != nil {
		return err
	}
	k, err := h.Tenancy.CreateCustomerKey(ctx, root, c.FormValue("customer_label"), nil)
	if err != nil {
		return err
	}
	rootKey, err := h.Tenancy.AccountKey(ctx, sess.AccountID, id)
	if err != nil {
		return err
	}
	h.Logger.Info("dashboard: customer key created", "request_id", h.RequestID(c), "account_id", sess.AccountID,
		"user_id", sess.UserID, "key_id", k.ID, "root_key_id", id)
	return h.show(c, http.StatusCreated, "keycreated", view{
		Title: "New customer key", Nav: "keys", Session: sess,
		Data: createdView{Key: k, Root: &rootKey, Back: Prefix + "/keys/" + id.String()},
	})
}

// SetLimits changes a customer key's spend limit and rate limit, as PATCH
// /api/v1/keys does: an empty amount removes the spend limit, an empty rate
// restores the service default. The change is published to every API node
// before the page says it is saved.
func (h *Dashboard) SetLimits(c *fiber.Ctx) error {
	ctx, sess, id, err := keyRoute(c)
	if err != nil {
		return err
	}
	u := tenancy.KeyUpdate{SpendLimitSet: true, RateLimitSet: true}
	if amount := strings.TrimSpace(c.FormValue("spend_amount")); amount != "" {
		cents, err := money.ParseDollars(amount)
		if err != nil {
			return apperr.InvalidField("spend_amount", "spend limit: %s", apperr.Clip(err.Error()))
		}
		l, err := tenancy.ParseSpendLimit(cents, c.FormValue("spend_period"))
		if err != nil {
			return err
		}
		u.SpendLimit = &l
	}
	if rate := strings.TrimSpace(c.FormValue("rate_limit")); rate != "" {
		n, err := strconv.Atoi(rate)
		if err != nil {
			return apperr.InvalidField("rate_limit", "rate limit must be a whole number of requests per minute")
		}
		u.RateLimit = &n
	}
	k, err := h.KeyChanges.Update(ctx, tenancy.KeysOfAccount(sess.AccountID), id, u)
	if err != nil {
		return err
	}
	h.Logger.Info("dashboard: key limits changed", "request_id", h.RequestID(c), "account_id", sess.AccountID,
		"user_id", sess.UserID, "key_id", k.ID)
	return c.Redirect(backFrom(k)+"?m=limits", fiber.StatusSeeOther)
}

type revokeView struct {
	Key       tenancy.Key
	Customers int // live customer keys a root key takes with it
	Back      string
	CSRFToken string
}

// RevokeForm asks for confirmation, saying what goes with the key.
func (h *Dashboard) RevokeForm(c *fiber.Ctx) error {
	ctx, sess, id, err := keyRoute(c)
	if err != nil {
		return err
	}
	k, err := h.Tenancy.AccountKey(ctx, sess.AccountID, id)
	if err != nil {
		return err
	}
	v := revokeView{Key: k, Back: backFrom(k), CSRFToken: sess.CSRFToken}
	if k.Kind == tenancy.KindRoot {
		roots, err := h.Tenancy.ListRootKeys(ctx, sess.AccountID)
		if err != nil {
			return err
		}
		for _, r := range roots {
			if r.ID == k.ID {
				v.Customers = r.LiveCustomerKeys
			}
		}
	}
	return h.show(c, http.StatusOK, "revoke", view{
		Title: "Revoke key " + displayName(k), Nav: "keys", Session: sess, Data: v,
	})
}

// RevokeKey revokes a key of the account (a root key with its customer
// keys) everywhere at once, as DELETE /api/v1/keys does.
func (h *Dashboard) RevokeKey(c *fiber.Ctx) error {
	ctx, sess, id, err := keyRoute(c)
	if err != nil {
		return err
	}
	rev, err := h.KeyChanges.Revoke(ctx, tenancy.KeysOfAccount(sess.AccountID), id)
	if err != nil {
		return err
	}
	h.Logger.Info("dashboard: key revoked", "request_id", h.RequestID(c), "account_id", sess.AccountID,
		"user_id", sess.UserID, "key_id", rev.Key.ID, "revoked_keys", len(rev.Revoked))
	return c.Redirect(backFrom(rev.Key)+"?m=revoked", fiber.StatusSeeOther)
}

// backFrom is the page listing a key: the keys page for a root key, its
// root's page for a customer key.
func backFrom(k tenancy.Key) string {
	if k.ParentID.Valid {
		return Prefix + "/keys/" + k.ParentID.UUID.String()
	}
	return Prefix + "/keys"
}

// displayName is how a key is named on pages: its label, else its prefix.
func displayName(k tenancy.Key) string {
	if k.Label != "" {
		return k.Label
	}
	return k.Prefix + "…"
}
