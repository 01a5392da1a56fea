package api

import (
	"encoding/json"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/catalog"
	"broll/collections"
	"broll/internal/apperr"
	"broll/internal/paging"
)

// collectionsAPI is /api/v1/collections: a key's shortlists of clips.
// Items are rendered as the clip routes render Video objects (clips).
type collectionsAPI struct {
	collections *collections.Service
	clips       *clipsAPI
}

// collectionJSON is the Collection object (api/openapi.json).
type collectionJSON struct {
	ID          uuid.UUID `json:"id"`
	APIKeyID    uuid.UUID `json:"api_key_id"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	ItemCount   int       `json:"item_count"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	Livemode    bool      `json:"livemode"`
}

// keysetPaginationJSON is a keyset list's paging.
type keysetPaginationJSON struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func keysetPagination(limit int, more bool, next string) keysetPaginationJSON {
	out := keysetPaginationJSON{Limit: limit, HasMore: more}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

type collectionListJSON struct {
	Collections []collectionJSON     `json:"collections"`
	Pagination  keysetPaginationJSON `json:"pagination"`
}

// collectionItemsJSON is a collection with a page of its items.
type collectionItemsJSON struct {
	collectionJSON
	Items      videoList            `json:"items"`
	Pagination keysetPaginationJSON `json:"pagination"`
}

func renderCollection(c collections.Collection) collectionJSON {
	return collectionJSON{ID: c.ID, APIKeyID: c.KeyID, Name: c.Name, Description: c.Description, ItemCount: c.ItemCount,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Livemode: c.Livemode}
}

// collectionInput is the body of POST and PATCH /api/v1/collections.
type collectionInput struct {
	Name        *string        `json:"name"`
	Description optionalString `json:"description"`
}

// optionalString tells a member left out (Set false) from one given as
// null (Set, Value nil).
type optionalString struct {
	Set   bool
	Value *string
}

func (o *optionalString) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.Value)
}

// itemsInput is the body of PUT /api/v1/collections/{id}/items.
type itemsInput struct {
	VideoIDs []string `json:"video_ids"`
}

func (s *collectionsAPI) createCollection(c *fiber.Ctx) error {
	var in collectionInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return apperr.InvalidField("name", "name is required (1-200 characters)")
	}
	col, err := s.collections.Create(c.UserContext(), principal(c), collections.CreateRequest{Name: *in.Name, Description: in.Description.Value})
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(renderCollection(col))
}

func (s *collectionsAPI) listCollections(c *fiber.Ctx) error {
	pr, err := paging.Parse(queryValues(c), collections.ListBounds)
	if err != nil {
		return err
	}
	q := collections.ListQuery{Limit: pr.Limit, Cursor: pr.Cursor}
	if raw := c.Query("api_key_id"); raw != "" {
		if q.KeyID, err = uuid.Parse(raw); err != nil {
			return apperr.InvalidField("api_key_id", "api_key_id %q is not a UUID", apperr.Clip(raw))
		}
	}
	page, err := s.collections.List(c.UserContext(), principal(c), q)
	if err != nil {
		return err
	}
	out := collectionListJSON{Collections: make([]collectionJSON, len(page.Collections)),
		Pagination: keysetPagination(pr.Limit, page.HasMore, page.NextCursor)}
	for i, col := range page.Collections {
		out.Collections[i] = renderCollection(col)
	}
	return c.JSON(out)
}

func (s *collectionsAPI) getCollection(c *fiber.Ctx) error {
	id, err := collectionID(c)
	if err != nil {
		return err
	}
	pr, err := paging.Parse(queryValues(c), collections.ItemsBounds)
	if err != nil {
		return err
	}
	out, err := s.collectionView(c, id, collections.ItemsQuery{Limit: pr.Limit, Cursor: pr.Cursor})
	if err != nil {
		return err
	}
	return sendJSON(c, encodedSize(out.Items), out.appendJSON)
}

// collectionView is a collection the calling key sees with a page of its
// items rendered as Video objects for that key: the answer of
// GET /api/v1/collections/{id}, for REST and MCP alike. q.Limit is the
// page size already read against collections.ItemsBounds.
func (s *collectionsAPI) collectionView(c *fiber.Ctx, id uuid.UUID, q collections.ItemsQuery) (collectionItemsJSON, error) {
	p := principal(c)
	col, page, err := s.collections.Items(c.UserContext(), p, id, q)
	if err != nil {
		return collectionItemsJSON{}, err
	}
	clips := make([]catalog.Video, len(page.Items))
	for i, it := range page.Items {
		clips[i] = it.Video
	}
	items, err := s.clips.renderVideos(c, p.KeyID, clips)
	if err != nil {
		return collectionItemsJSON{}, err
	}
	return collectionItemsJSON{collectionJSON: renderCollection(col), Items: items,
		Pagination: keysetPagination(q.Limit, page.HasMore, page.NextCursor)}, nil
}

func (s *collectionsAPI) updateCollection(c *fiber.Ctx) error {
	id, err := collectionID(c)
	if err != nil {
		return err
	}
	var in collectionInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	if in.Name == nil && !in.Description.Set {
		return apperr.InvalidField("name", "give name, description or both")
	}
	col, err := s.collections.Update(c.UserContext(), principal(c), id, collections.Patch{Name: in.Name,
		Description: in.Description.Value, DescriptionSet: in.Description.Set})
	if err != nil {
		return err
	}
	return c.JSON(renderCollection(col))
}

func (s *collectionsAPI) deleteCollection(c *fiber.Ctx) error {
	id, err := collectionID(c)
	if err != nil {
		return err
	}
	if err := s.collections.Delete(c.UserContext(), principal(c), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"id": id, "deleted": true})
}

func (s *collectionsAPI) addCollectionItems(c *fiber.Ctx) error {
	id, err := collectionID(c)
	if err != nil {
		return err
	}
	var in itemsInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	ids, err := videoIDList(in.VideoIDs)
	if err != nil {
		return err
	}
	col, err := s.collections.AddItems(c.UserContext(), principal(c), id, ids)
	if err != nil {
		return err
	}
	return c.JSON(renderCollection(col))
}

func (s *collectionsAPI) removeCollectionItem(c *fiber.Ctx) error {
	id, err := collectionID(c)
	if err != nil {
		return err
	}
	raw := c.Query("video_id")
	if raw == "" {
		return apperr.InvalidField("video_id", "query parameter video_id (the clip's UUID) is required")
	}
	video, err := uuid.Parse(raw)
	if err != nil {
		return apperr.InvalidField("video_id", "video_id %q is not a UUID", apperr.Clip(raw))
	}
	col, err := s.collections.RemoveItem(c.UserContext(), principal(c), id, video)
	if err != nil {
		return err
	}
	return c.JSON(renderCollection(col))
}

// collectionID is the {id} of a collection route.
func collectionID(c *fiber.Ctx) (uuid.UUID, error) {
	raw := c.Params("id")
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, apperr.InvalidField("id", "collection id %q is not a UUID", apperr.Clip(raw))
	}
	return id, nil
}

// videoIDList reads the video_ids of an add: 1 to MaxItemsPerAdd UUIDs.
func videoIDList(raw []string) ([]uuid.UUID, error) {
	if len(raw) == 0 || len(raw) > collections.MaxItemsPerAdd {
		return nil, apperr.InvalidField("video_ids", "video_ids must hold 1 to %d video ids", collections.MaxItemsPerAdd)
	}
	out := make([]uuid.UUID, len(raw))
	for i, r := range raw {
		id, err := uuid.Parse(r)
		if err != nil {
			return nil, apperr.InvalidField("video_ids", "video_ids[%d] = %q is not a UUID", i, apperr.Clip(r))
		}
		out[i] = id
	}
	return out, nil
}
