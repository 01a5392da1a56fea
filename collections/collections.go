package collections

import (
	"context"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/displayname"
	"broll/internal/paging"
	"broll/tenancy"
)

const notFoundMsg = "collection not found"

// Create makes a collection of the calling key, in its mode: 409
// limit_reached when the key holds MaxCollectionsPerKey already.
func (s *Service) Create(ctx context.Context, p tenancy.Principal, req CreateRequest) (Collection, error) {
	if err := owner(p); err != nil {
		return Collection{}, err
	}
	name, err := displayname.Normalize("name", req.Name, true)
	if err != nil {
		return Collection{}, err
	}
	desc, err := description(req.Description)
	if err != nil {
		return Collection{}, err
	}
	var out Collection
	err = database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, countUpSQL, p.KeyID, MaxCollectionsPerKey).Scan(&n); err != nil {
			if database.NoRows(err) {
				return limitReached("this key holds %d collections, the most a key may hold", MaxCollectionsPerKey)
			}
			return err
		}
		out, err = database.SelectOne(ctx, tx, pgx.RowToStructByName[Collection], insertSQL,
			p.AccountID, p.KeyID, !p.Test, name, desc)
		return err
	})
	if err != nil {
		return Collection{}, database.Interpret(err, notFoundMsg)
	}
	return out, nil
}

// Get reads a collection p may see.
func (s *Service) Get(ctx context.Context, p tenancy.Principal, id uuid.UUID) (Collection, error) {
	f := &paging.Builder{}
	f.Arg(id)
	cond := visibleTo(p, f)
	c, err := database.SelectOne(ctx, s.pool, pgx.RowToStructByName[Collection], getSQL(cond), f.Args()...)
	if err != nil {
		return Collection{}, database.Interpret(err, notFoundMsg)
	}
	return c, nil
}

// List is a page of the collections p sees, newest first.
func (s *Service) List(ctx context.Context, p tenancy.Principal, q ListQuery) (Page, error) {
	if q.KeyID != uuid.Nil {
		if err := s.checkKeyFilter(ctx, p, q.KeyID); err != nil {
			return Page{}, err
		}
	}
	limit := pageSize(q.Limit, DefaultPageSize)
	query := paging.Fingerprint("collections", q.KeyID.String())
	f := &paging.Builder{}
	f.Where(visibleTo(p, f))
	if q.KeyID != uuid.Nil {
		f.Where("c.api_key_id = " + f.Arg(q.KeyID))
	}
	order := paging.Order{Keys: []string{"c.created_at"}, ID: "c.id", Desc: true}
	rowsBefore := 0
	if q.Cursor != "" {
		cur, err := paging.ReadCursor(q.Cursor, query, paging.KeyTime)
		if err != nil {
			return Page{}, err
		}
		f.Where(order.After(f, cur.Keys, cur.ID))
		rowsBefore = cur.N
	}
	lim := f.Limit(limit)
	rows, err := database.Select(ctx, s.pool, pgx.RowToStructByName[Collection], listSQL(f.And(), order.By(), lim), f.Args()...)
	if err != nil {
		return Page{}, database.Interpret(err, notFoundMsg)
	}
	page, more, next := paging.Page(rows, limit, func(last Collection) paging.Cursor {
		return paging.Cursor{Query: query, Keys: []any{last.CreatedAt}, ID: last.ID, N: rowsBefore + limit}
	})
	if page == nil {
		page = []Collection{}
	}
	return Page{Collections: page, HasMore: more, NextCursor: next}, nil
}

// Update renames a collection of the calling key or changes its
// description.
func (s *Service) Update(ctx context.Context, p tenancy.Principal, id uuid.UUID, patch Patch) (Collection, error) {
	var name *string
	if patch.Name != nil {
		n, err := displayname.Normalize("name", *patch.Name, true)
		if err != nil {
			return Collection{}, err
		}
		name = &n
	}
	desc, err := description(patch.Description)
	if err != nil {
		return Collection{}, err
	}
	var out Collection
	err = s.change(ctx, p, id, func(tx pgx.Tx, _ lockedCollection) error {
		out, err = database.SelectOne(ctx, tx, pgx.RowToStructByName[Collection], updateSQL, id, name, patch.DescriptionSet, desc)
		return err
	})
	return out, err
}

// Delete removes a collection of the calling key and its items.
func (s *Service) Delete(ctx context.Context, p tenancy.Principal, id uuid.UUID) error {
	return s.change(ctx, p, id, func(tx pgx.Tx, _ lockedCollection) error {
		if _, err := tx.Exec(ctx, deleteSQL, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, countDownSQL, p.KeyID)
		return err
	})
}

// change runs fn in a transaction holding the lock of collection id,
// which the calling key must have made: a collection it only reads (a
// root key's customer's) is 403, one it does not see 404.
func (s *Service) change(ctx context.Context, p tenancy.Principal, id uuid.UUID, fn func(pgx.Tx, lockedCollection) error) error {
	if err := owner(p); err != nil {
		return err
	}
	err := database.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		c, err := database.SelectOne(ctx, tx, pgx.RowToStructByName[lockedCollection], lockOwnSQL, id, p.KeyID)
		if err != nil {
			return err
		}
		return fn(tx, c)
	})
	if database.NoRows(err) {
		if _, gerr := s.Get(ctx, p, id); gerr == nil {
			return apperr.New(apperr.Forbidden, "only the key that made a collection changes it; this key may only read it")
		}
	}
	return database.Interpret(err, notFoundMsg)
}

// checkKeyFilter refuses an api_key_id naming a key p may not narrow its
// list to: a customer key may not filter (403); a root key names itself or
// one of its customer keys, the account owner (the dashboard) any key of
// the account; anything else is 404, as on the purchase list.
func (s *Service) checkKeyFilter(ctx context.Context, p tenancy.Principal, keyID uuid.UUID) error {
	var ok bool
	var err error
	switch {
	case p.IsAccountOwner():
		err = s.pool.QueryRow(ctx, keyOfAccountSQL, p.AccountID, keyID).Scan(&ok)
	case p.Kind == tenancy.KindRoot:
		err = s.pool.QueryRow(ctx, keyInFamilySQL, p.KeyID, keyID).Scan(&ok)
	default:
		return apperr.New(apperr.Forbidden, "only a root key may pass api_key_id").With("field", "api_key_id")
	}
	if err != nil {
		return database.Interpret(err, "key not found")
	}
	if !ok {
		return apperr.NotFoundf("key not found")
	}
	return nil
}

// lockedCollection is a collection read under its lock, with the
// position its next item comes after.
type lockedCollection struct {
	Collection
	LastPosition int64 `db:"last_position"`
}

// owner refuses principals that cannot hold collections (an ops key, the
// account owner of the dashboard).
func owner(p tenancy.Principal) error {
	if p.AccountID == uuid.Nil || p.KeyID == uuid.Nil {
		return apperr.New(apperr.Forbidden, "collections belong to API keys of an account")
	}
	return nil
}

// description checks a description (nil: none): at most
// MaxDescriptionLen characters of text.
func description(d *string) (*string, error) {
	if d == nil {
		return nil, nil
	}
	if !utf8.ValidString(*d) {
		return nil, apperr.InvalidField("description", "description must be UTF-8 text")
	}
	if n := utf8.RuneCountInString(*d); n > MaxDescriptionLen {
		return nil, apperr.InvalidField("description", "description must be at most %d characters, got %d", MaxDescriptionLen, n)
	}
	return d, nil
}

func pageSize(n, def int) int {
	switch {
	case n <= 0:
		return def
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}

func limitReached(format string, limit int) error {
	return apperr.New(apperr.LimitReached, format, limit).With("limit", limit)
}
