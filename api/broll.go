package api

import (
	"context"

	"net/url"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/catalog/search"
	"broll/internal/apperr"
	"broll/internal/money"
)

type brollListJSON struct {
	Videos     videoList `json:"videos"`
	Pagination struct {
		paginationJSON
		// TotalExact is false when total is the planner's estimate (more
		// than search.CountBound clips match, or counting costs too much).
		TotalExact bool `json:"total_exact"`
		// NextCursor continues after this page (keyset); null on the last.
		NextCursor *string `json:"next_cursor"`
	} `json:"pagination"`
}

// brollList renders a catalog page.
func brollList(page search.Page, videos []videoJSON) brollListJSON {
	var out brollListJSON
	out.Videos = videos
	out.Pagination.paginationJSON = paginationJSON{Limit: page.Limit, Offset: page.Offset, Page: page.Page,
		Total: page.Total, HasMore: page.HasMore}
	out.Pagination.TotalExact = page.TotalExact
	if page.NextCursor != "" {
		out.Pagination.NextCursor = &page.NextCursor
	}
	return out
}

func (s *clipsAPI) listBroll(c *fiber.Ctx) error {
	values, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return apperr.New(apperr.Invalid, "malformed query string")
	}
	q, err := parseBrollQuery(values)
	if err != nil {
		return err
	}
	_, out, err := s.searchBroll(c.UserContext(), c, q)
	if err != nil {
		return err
	}
	return sendJSON(c, encodedSize(out.Videos), out.appendJSON)
}

// searchBroll runs a catalog query for the calling key, as REST and MCP
// both list clips: ownership, links and paging for that key.
func (s *clipsAPI) searchBroll(ctx context.Context, c *fiber.Ctx, q search.Query) (search.Page, brollListJSON, error) {
	keyID := principal(c).KeyID
	q.KeyID, q.Pass = keyID, pass(c)
	var qe search.QueryEmbedder
	if s.queryEmbedder != nil { // a nil interface, not a typed nil, when there is none
		qe = s.queryEmbedder
	}
	page, err := s.search.Search(ctx, q, qe)
	if err != nil {
		return page, brollListJSON{}, err
	}
	videos, err := s.renderVideos(c, keyID, page.Videos)
	if err != nil {
		return page, brollListJSON{}, err
	}
	return page, brollList(page, videos), nil
}

func (s *clipsAPI) getBroll(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("id"))
	if err != nil {
		return apperr.InvalidField("id", "video id %q is not a UUID", apperr.Clip(c.Params("id")))
	}
	v, bought, err := s.catalog.VideoForKey(c.UserContext(), id, principal(c).KeyID, pass(c))
	if err != nil {
		return err
	}
	j, err := s.renderClip(c.UserContext(), v, bought)
	if err != nil {
		return err
	}
	return c.JSON(j)
}

type valueCountJSON struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

type tierCountJSON struct {
	Name     string      `json:"name"`
	Price    money.Cents `json:"price"`
	Currency string      `json:"currency"`
	Count    int         `json:"count"`
}

type modelCountJSON struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Count int    `json:"count"`
}

type filtersJSON struct {
	Emotion     []valueCountJSON `json:"emotion"`
	Gender      []valueCountJSON `json:"gender"`
	AgeRange    []valueCountJSON `json:"age_range"`
	Location    []valueCountJSON `json:"location"`
	MediaType   []valueCountJSON `json:"media_type"`
	Orientation []valueCountJSON `json:"orientation"`
	Difficulty  []tierCountJSON  `json:"difficulty"`
	Models      []modelCountJSON `json:"models"`
}

// filterCache keeps this node's filter values for filterCacheTTL: they
// take a pass over the whole catalog, are asked for often and change
// slowly; a count a few seconds old misleads nobody.
type filterCache struct {
	mu      sync.Mutex
	out     filtersJSON
	fetched time.Time
}

const filterCacheTTL = 10 * time.Second

func (s *clipsAPI) brollFilters(cache *filterCache) fiber.Handler {
	return func(c *fiber.Ctx) error {
		now := s.now()
		cache.mu.Lock()
		out, fresh := cache.out, !cache.fetched.IsZero() && now.Sub(cache.fetched) < filterCacheTTL
		cache.mu.Unlock()
		if !fresh {
			f, err := s.search.Filters(c.UserContext())
			if err != nil {
				return err
			}
			out = renderFilters(f)
			cache.mu.Lock()
			cache.out, cache.fetched = out, now
			cache.mu.Unlock()
		}
		return c.JSON(out)
	}
}

func renderFilters(f search.FilterValues) filtersJSON {
	vals := func(in []search.ValueCount) []valueCountJSON {
		out := make([]valueCountJSON, len(in))
		for i, v := range in {
			out[i] = valueCountJSON{Value: v.Value, Count: v.Count}
		}
		return out
	}
	out := filtersJSON{
		Emotion: vals(f.Emotion), Gender: vals(f.Gender), AgeRange: vals(f.AgeRange),
		Location: vals(f.Location), MediaType: vals(f.MediaType), Orientation: vals(f.Orientation),
		Difficulty: make([]tierCountJSON, len(f.Difficulty)), Models: make([]modelCountJSON, len(f.Models)),
	}
	for i, t := range f.Difficulty {
		out.Difficulty[i] = tierCountJSON{Name: t.Name, Price: t.Price, Currency: "USD", Count: t.Count}
	}
	for i, m := range f.Models {
		out.Models[i] = modelCountJSON{ID: m.ID, Name: m.Name, Count: m.Count}
	}
	return out
}
