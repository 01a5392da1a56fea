package collections

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"broll/catalog"
	"broll/internal/apperr"
	"broll/internal/database"
	"broll/internal/paging"
	"broll/tenancy"
)

// AddItems adds clips to a collection of the calling key, in the order
// given, each once; a clip the collection holds stays where it is. 1 to
// MaxItemsPerAdd ids; an id naming no clip on sale is 404 naming it (as a
// purchase names unknown ids) and nothing is added; passing
// MaxItemsPerCollection is 409 limit_reached and nothing is added. The
// collection's row lock makes the count exact under concurrent adds.
func (s *Service) AddItems(ctx context.Context, p tenancy.Principal, id uuid.UUID, videoIDs []uuid.UUID) (Collection, error) {
	if len(videoIDs) == 0 || len(videoIDs) > MaxItemsPerAdd {
		return Collection{}, apperr.InvalidField("video_ids", "video_ids must hold 1 to %d video ids", MaxItemsPerAdd)
	}
	var out Collection
	err := s.change(ctx, p, id, func(tx pgx.Tx, c lockedCollection) error {
		unknown, err := database.Select(ctx, tx, pgx.RowTo[uuid.UUID], unknownClipsSQL, id, videoIDs)
		if err != nil {
			return err
		}
		if len(unknown) > 0 {
			names := make([]string, len(unknown))
			for i, u := range unknown {
				names[i] = u.String()
			}
			slices.Sort(names)
			return apperr.NotFoundf("videos not found: %v", names).With("unknown_video_ids", names)
		}
		added, err := database.Select(ctx, tx, pgx.RowTo[int64], addItemsSQL, id, videoIDs, c.LastPosition)
		if err != nil {
			return err
		}
		if len(added) == 0 {
			out = c.Collection
			return nil
		}
		if c.ItemCount+len(added) > MaxItemsPerCollection {
			return limitReached("a collection holds at most %d clips", MaxItemsPerCollection)
		}
		row, err := database.SelectOne(ctx, tx, pgx.RowToStructByName[lockedCollection], countItemsSQL, id, len(added), len(added))
		out = row.Collection
		return err
	})
	return out, err
}

// RemoveItem takes a clip out of a collection of the calling key; a clip
// it does not hold changes nothing.
func (s *Service) RemoveItem(ctx context.Context, p tenancy.Principal, id, videoID uuid.UUID) (Collection, error) {
	var out Collection
	err := s.change(ctx, p, id, func(tx pgx.Tx, c lockedCollection) error {
		removed, err := database.Select(ctx, tx, pgx.RowTo[int64], removeItemSQL, id, videoID)
		if err != nil || len(removed) == 0 {
			out = c.Collection
			return err
		}
		row, err := database.SelectOne(ctx, tx, pgx.RowToStructByName[lockedCollection], countItemsSQL, id, -1, 0)
		out = row.Collection
		return err
	})
	return out, err
}

// Items is a page of the items of a collection p sees, in the order
// added (keyset on the position). Retired clips are listed with their
// RetiredAt; clips whose media is not sound are left out.
func (s *Service) Items(ctx context.Context, p tenancy.Principal, id uuid.UUID, q ItemsQuery) (Collection, ItemsPage, error) {
	limit := pageSize(q.Limit, DefaultItemsPageSize)
	query := paging.Fingerprint("collection-items", id.String())
	var after int64
	rowsBefore := 0
	if q.Cursor != "" {
		cur, err := paging.ReadCursor(q.Cursor, query, paging.KeyInt)
		if err != nil {
			return Collection{}, ItemsPage{}, err
		}
		after, _ = cur.Keys[0].(int64)
		rowsBefore = cur.N
	}
	// The collection, if p sees it, and the page in one round trip: the
	// page counts only when the collection came back.
	f := &paging.Builder{}
	f.Arg(id)
	cond := visibleTo(p, f)
	batch := &pgx.Batch{}
	batch.Queue(getSQL(cond), f.Args()...)
	batch.Queue(itemsSQL, id, after, limit+1)
	br := s.pool.SendBatch(ctx, batch)
	c, rows, err := readItems(br, s.scanItem)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Collection{}, ItemsPage{}, database.Interpret(err, notFoundMsg)
	}
	page, more, next := paging.Page(rows, limit, func(last Item) paging.Cursor {
		return paging.Cursor{Query: query, Keys: []any{last.position}, ID: last.Video.ID, N: rowsBefore + limit}
	})
	if page == nil {
		page = []Item{}
	}
	return c, ItemsPage{Items: page, HasMore: more, NextCursor: next}, nil
}

// readItems reads the collection and its page from the batch Items sent:
// pgx.ErrNoRows when the collection is not there for the caller.
func readItems(br pgx.BatchResults, scan pgx.RowToFunc[Item]) (Collection, []Item, error) {
	rows, err := br.Query()
	if err != nil {
		return Collection{}, nil, err
	}
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Collection])
	if err != nil {
		return Collection{}, nil, err
	}
	if rows, err = br.Query(); err != nil {
		return Collection{}, nil, err
	}
	items, err := pgx.CollectRows(rows, scan)
	return c, items, err
}

func (s *Service) scanItem(row pgx.CollectableRow) (Item, error) {
	var it Item
	var v catalog.Video
	var err error
	if s.opts.Videos != nil {
		v, err = s.opts.Videos.ScanListed(row, &it.position, &it.AddedAt)
	} else {
		v, err = catalog.ReadListed(row, &it.position, &it.AddedAt)
	}
	it.Video = v
	return it, err
}
