package brollclient

import (
	"context"
	"iter"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// Videos walks every clip that params select, page after page (following
// next_cursor), until the last page or the first error, which it yields
// once. Stop early with break.
//
//	for v, err := range b.Videos(ctx, &brollclient.ListVideosParams{}) { ... }
func (b *Broll) Videos(ctx context.Context, params *ListVideosParams) iter.Seq2[Video, error] {
	p := ListVideosParams{}
	if params != nil {
		p = *params
	}
	p.Page, p.Offset = nil, nil
	return pages(func(cursor *string) ([]Video, *string, error) {
		p.Cursor = cursor
		r, err := b.Search(ctx, &p)
		if err != nil {
			return nil, nil, err
		}
		return r.Videos, r.Pagination.NextCursor, nil
	})
}

// Purchases walks the purchases that params select, as Videos does.
func (b *Broll) Purchases(ctx context.Context, params *ListPurchasesParams) iter.Seq2[PurchaseRecord, error] {
	p := ListPurchasesParams{}
	if params != nil {
		p = *params
	}
	p.Page, p.Offset = nil, nil
	return pages(func(cursor *string) ([]PurchaseRecord, *string, error) {
		p.Cursor = cursor
		r, err := b.API.ListPurchasesWithResponse(ctx, &p)
		if err != nil {
			return nil, nil, err
		}
		list, err := answer(r.JSON200, r.HTTPResponse, r.Body)
		if err != nil {
			return nil, nil, err
		}
		return list.Purchases, list.Pagination.NextCursor, nil
	})
}

// Keys walks the customer keys of a root key that params select.
func (b *Broll) Keys(ctx context.Context, params *ListCustomerKeysParams) iter.Seq2[Key, error] {
	p := ListCustomerKeysParams{}
	if params != nil {
		p = *params
	}
	return pages(func(cursor *string) ([]Key, *string, error) {
		p.Cursor = cursor
		r, err := b.API.ListCustomerKeysWithResponse(ctx, &p)
		if err != nil {
			return nil, nil, err
		}
		list, err := answer(r.JSON200, r.HTTPResponse, r.Body)
		if err != nil {
			return nil, nil, err
		}
		return list.Keys, list.Pagination.NextCursor, nil
	})
}

// Collections walks the collections the calling key sees, newest first.
func (b *Broll) Collections(ctx context.Context, params *ListCollectionsParams) iter.Seq2[Collection, error] {
	p := ListCollectionsParams{}
	if params != nil {
		p = *params
	}
	return pages(func(cursor *string) ([]Collection, *string, error) {
		p.Cursor = cursor
		r, err := b.API.ListCollectionsWithResponse(ctx, &p)
		if err != nil {
			return nil, nil, err
		}
		list, err := answer(r.JSON200, r.HTTPResponse, r.Body)
		if err != nil {
			return nil, nil, err
		}
		return list.Collections, list.Pagination.NextCursor, nil
	})
}

// CollectionItems walks every clip of a collection, in the order added.
func (b *Broll) CollectionItems(ctx context.Context, id openapi_types.UUID) iter.Seq2[Video, error] {
	return pages(func(cursor *string) ([]Video, *string, error) {
		c, err := b.Collection(ctx, id, &GetCollectionParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		return c.Items, c.Pagination.NextCursor, nil
	})
}

// pages yields the items of page after page until next gives no cursor.
func pages[T any](next func(cursor *string) ([]T, *string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			items, nextCursor, err := next(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if nextCursor == nil || *nextCursor == "" || len(items) == 0 {
				return
			}
			cursor = nextCursor
		}
	}
}
