package main

import (
	"context"
	"time"

	"github.com/google/uuid"

	"broll/collections"
	"broll/tenancy"
)

// exportedCollection is one collection of collections export: the
// collection and its clips' ids in the order they were added.
type exportedCollection struct {
	ID          uuid.UUID   `json:"id"`
	Name        string      `json:"name"`
	Description *string     `json:"description"`
	ItemCount   int         `json:"item_count"`
	Livemode    bool        `json:"livemode"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
	VideoIDs    []uuid.UUID `json:"video_ids"`
	// RetiredVideoIDs are those of VideoIDs retired from sale since they
	// were added: kept in the collection, skipped by its purchase.
	RetiredVideoIDs []uuid.UUID `json:"retired_video_ids"`
}

// collectionsExport prints every collection a key made, newest first, with
// its clips in order: what a platform asks for when a customer leaves, or
// before a revoked key's collections are swept. A revoked key's collections
// are printed while they are kept.
func (c *cli) collectionsExport(f *flags) action {
	id := f.id("key")
	return c.opened(func(ctx context.Context, e *env) (any, error) {
		k, err := e.tenancy.GetKey(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := []exportedCollection{}
		if k.AccountID.Valid { // an ops key holds no collections
			if out, err = exportCollections(ctx, e.collections, k); err != nil {
				return nil, err
			}
		}
		return map[string]any{"key_id": k.ID, "account_id": k.AccountID, "kind": k.Kind, "revoked_at": k.RevokedAt,
			"collections": out}, nil
	})
}

// exportCollections reads key k's own collections and their items, page
// after page, as k itself reads them.
func exportCollections(ctx context.Context, svc *collections.Service, k tenancy.Key) ([]exportedCollection, error) {
	p := tenancy.Principal{KeyID: k.ID, AccountID: k.AccountID.UUID, RootKeyID: k.ID, Kind: k.Kind, Label: k.Label,
		Scopes: k.Scopes, Test: k.Test}
	q := collections.ListQuery{Limit: collections.MaxPageSize}
	if k.Kind == tenancy.KindRoot {
		// A root key reads its customers' collections too: only its own.
		q.KeyID = k.ID
	} else {
		p.RootKeyID = k.ParentID.UUID
	}
	out := []exportedCollection{}
	for {
		page, err := svc.List(ctx, p, q)
		if err != nil {
			return nil, err
		}
		for _, col := range page.Collections {
			ec, err := exportItems(ctx, svc, p, col)
			if err != nil {
				return nil, err
			}
			out = append(out, ec)
		}
		if page.NextCursor == "" {
			return out, nil
		}
		q.Cursor = page.NextCursor
	}
}

// exportItems is col with the ids of its clips in the order added.
func exportItems(ctx context.Context, svc *collections.Service, p tenancy.Principal, col collections.Collection) (exportedCollection, error) {
	ec := exportedCollection{ID: col.ID, Name: col.Name, Description: col.Description, ItemCount: col.ItemCount,
		Livemode: col.Livemode, CreatedAt: col.CreatedAt, UpdatedAt: col.UpdatedAt,
		VideoIDs: []uuid.UUID{}, RetiredVideoIDs: []uuid.UUID{}}
	q := collections.ItemsQuery{Limit: collections.MaxPageSize}
	for {
		_, page, err := svc.Items(ctx, p, col.ID, q)
		if err != nil {
			return ec, err
		}
		for _, it := range page.Items {
			ec.VideoIDs = append(ec.VideoIDs, it.Video.ID)
			if it.Video.RetiredAt != nil {
				ec.RetiredVideoIDs = append(ec.RetiredVideoIDs, it.Video.ID)
			}
		}
		if page.NextCursor == "" {
			return ec, nil
		}
		q.Cursor = page.NextCursor
	}
}
