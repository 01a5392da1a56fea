package api

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/collections"
	"broll/internal/apperr"
	"broll/internal/displayname"
	"broll/internal/paging"
	"broll/tenancy"
)

// addCollectionTools registers the collection tools: an assistant's
// shortlist, kept for its key between calls and conversations, since a
// stateless server remembers nothing of either. They call the collections
// service the /api/v1/collections routes call and return the bodies those
// routes return.
func (s *mcpTools) addCollectionTools(srv *toolSet, read *mcp.ToolAnnotations) {
	openWorld, notDestructive := false, false

	addTool(s, srv, &mcp.Tool{Name: "create_collection", Title: "Create a collection (a shortlist of clips)",
		// Each call makes another collection: not idempotent. Nothing is
		// spent or lost: not destructive.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &notDestructive, OpenWorldHint: &openWorld},
		Description: "Start a named shortlist of clips for the user, kept for this API key between calls and conversations " +
			"(a collection). Returns its id: pass it as collection_id to add_to_collection, get_collection and purchase_videos. " +
			"Each call creates a new collection, so first look for an existing one with list_collections when the user " +
			"refers to a shortlist made earlier. At most " + strconv.Itoa(collections.MaxCollectionsPerKey) + " collections " +
			"per key (limit_reached). Nothing is bought or charged."},
		tenancy.ScopeBrollPurchase, refineCreateCollectionSchema, s.createCollectionTool)

	addTool(s, srv, &mcp.Tool{Name: "add_to_collection", Title: "Add clips to a collection",
		// A clip already there stays where it is: adding again changes
		// nothing, so the call is idempotent.
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &notDestructive, OpenWorldHint: &openWorld},
		Description: "Add 1 to " + strconv.Itoa(collections.MaxItemsPerAdd) + " clips (video_ids from search_videos, " +
			"get_video or find_similar_videos) to a collection this key made, after the clips it holds, in the order given. " +
			"A clip already in it stays where it is, so repeating a call is safe. An id that names no clip on sale fails " +
			"with not_found and adds nothing. A collection holds at most " + strconv.Itoa(collections.MaxItemsPerCollection) +
			" clips (limit_reached). Returns the collection with its new item_count; nothing is charged."},
		tenancy.ScopeBrollPurchase, refineAddToCollectionSchema, s.addToCollectionTool)

	addTool(s, srv, &mcp.Tool{Name: "list_collections", Title: "List collections", Annotations: read,
		Description: "The collections (shortlists of clips) this key can see, newest first: each with its id, name, " +
			"description, item_count and when it last changed. Use it to find a shortlist the user made in an earlier " +
			"conversation. A customer key sees its own; a root key also its customer keys' and may narrow to one with " +
			"api_key_id. Page with cursor=pagination.next_cursor."},
		tenancy.ScopeBrollRead, refineListCollectionsSchema, s.listCollectionsTool)

	addTool(s, srv, &mcp.Tool{Name: "get_collection", Title: "Get a collection and its clips", Annotations: read,
		Description: "One collection with its clips (items) in the order they were added: each a full video as " +
			"get_video returns it, with its price in USD, free preview, owned (and a fresh download_url when owned) and " +
			"retired (a retired clip stays listed but cannot be bought). Page through a long collection with " +
			"cursor=pagination.next_cursor. To buy the clips not yet owned, quote with purchase_videos " +
			"(collection_id, dry_run=true)."},
		tenancy.ScopeBrollRead, refineGetCollectionSchema, s.getCollectionTool)
}

// createCollectionArgs is the body of POST /api/v1/collections.
type createCollectionArgs struct {
	Name        string  `json:"name" jsonschema:"a short name the user will recognise, e.g. 'Cafe scenes for the spring campaign'"`
	Description *string `json:"description,omitempty" jsonschema:"what the shortlist is for, in a sentence or two"`
}

func refineCreateCollectionSchema(s *jsonschema.Schema) {
	s.Properties["name"].MinLength = jsonschema.Ptr(1)
	s.Properties["name"].MaxLength = jsonschema.Ptr(displayname.MaxLen)
	s.Properties["description"].MaxLength = jsonschema.Ptr(collections.MaxDescriptionLen)
}

func (s *mcpTools) createCollectionTool(ctx context.Context, c *fiber.Ctx, a createCollectionArgs) (collectionJSON, string, error) {
	col, err := s.collections.Create(ctx, principal(c), collections.CreateRequest{Name: a.Name, Description: a.Description})
	if err != nil {
		return collectionJSON{}, "", err
	}
	return renderCollection(col), fmt.Sprintf("Created collection %q, collection_id %s (empty). Add clips with add_to_collection; "+
		"it stays with this key for later conversations.", col.Name, col.ID), nil
}

// addToCollectionArgs are the collection of PUT
// /api/v1/collections/{id}/items and its body.
type addToCollectionArgs struct {
	CollectionID string   `json:"collection_id" jsonschema:"the collection's id, as create_collection or list_collections returned it"`
	VideoIDs     []string `json:"video_ids" jsonschema:"ids of the clips to add, in the order to add them; clips already in the collection stay where they are"`
}

func refineAddToCollectionSchema(s *jsonschema.Schema) {
	s.Properties["collection_id"].Format = "uuid"
	ids := s.Properties["video_ids"]
	ids.MinItems, ids.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(collections.MaxItemsPerAdd)
	ids.Items.Format = "uuid"
}

func (s *mcpTools) addToCollectionTool(ctx context.Context, c *fiber.Ctx, a addToCollectionArgs) (collectionJSON, string, error) {
	id, err := collectionArg(a.CollectionID)
	if err != nil {
		return collectionJSON{}, "", err
	}
	ids, err := videoIDList(a.VideoIDs)
	if err != nil {
		return collectionJSON{}, "", err
	}
	col, err := s.collections.AddItems(ctx, principal(c), id, ids)
	if err != nil {
		return collectionJSON{}, "", err
	}
	return renderCollection(col), fmt.Sprintf("Collection %q now holds %s. Read it back with get_collection; "+
		"quote it with purchase_videos (collection_id, dry_run=true).", col.Name, plural(col.ItemCount, "clip")), nil
}

// listCollectionsArgs are the query parameters of GET /api/v1/collections.
type listCollectionsArgs struct {
	APIKeyID string `json:"api_key_id,omitempty" jsonschema:"root key only: the collections of this one key (itself or one of its customer keys)"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"collections per page, default 50; larger values are clamped to 100"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"pagination.next_cursor of the previous call with the same arguments: the next page"`
}

func refineListCollectionsSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["api_key_id"].Format = "uuid"
	refineCollectionPaging(p, collections.ListBounds)
}

// refineCollectionPaging gives a collection tool's limit its bounds.
func refineCollectionPaging(p map[string]*jsonschema.Schema, b paging.Bounds) {
	p["limit"].Minimum = jsonschema.Ptr(1.0)
	p["limit"].Default = []byte(strconv.Itoa(b.DefaultLimit))
}

func (s *mcpTools) listCollectionsTool(ctx context.Context, c *fiber.Ctx, a listCollectionsArgs) (collectionListJSON, string, error) {
	pr, err := collections.ListBounds.Check(paging.Ask{Limit: a.Limit, Cursor: a.Cursor})
	if err != nil {
		return collectionListJSON{}, "", err
	}
	q := collections.ListQuery{Limit: pr.Limit, Cursor: pr.Cursor}
	if a.APIKeyID != "" {
		if q.KeyID, err = uuid.Parse(strings.TrimSpace(a.APIKeyID)); err != nil {
			return collectionListJSON{}, "", apperr.InvalidField("api_key_id", "api_key_id %q is not a UUID", apperr.Clip(a.APIKeyID))
		}
	}
	page, err := s.collections.List(ctx, principal(c), q)
	if err != nil {
		return collectionListJSON{}, "", err
	}
	out := collectionListJSON{Collections: make([]collectionJSON, len(page.Collections)),
		Pagination: keysetPagination(pr.Limit, page.HasMore, page.NextCursor)}
	names := make([]string, len(page.Collections))
	for i, col := range page.Collections {
		out.Collections[i] = renderCollection(col)
		names[i] = fmt.Sprintf("%q (%s)", col.Name, plural(col.ItemCount, "clip"))
	}
	summary := "No collections yet: create_collection starts one."
	if len(names) > 0 {
		summary = fmt.Sprintf("%s on this page, newest first: %s.", plural(len(names), "collection"), strings.Join(names, ", "))
	}
	if page.NextCursor != "" {
		summary += " More with cursor=pagination.next_cursor."
	}
	return out, summary, nil
}

// getCollectionArgs are the collection of GET /api/v1/collections/{id}
// and its query parameters.
type getCollectionArgs struct {
	CollectionID string `json:"collection_id" jsonschema:"the collection's id, as create_collection or list_collections returned it"`
	Limit        *int   `json:"limit,omitempty" jsonschema:"clips per page, default 20; larger values are clamped to 100"`
	Cursor       string `json:"cursor,omitempty" jsonschema:"pagination.next_cursor of the previous call with the same collection: the next clips"`
}

func refineGetCollectionSchema(s *jsonschema.Schema) {
	s.Properties["collection_id"].Format = "uuid"
	refineCollectionPaging(s.Properties, collections.ItemsBounds)
}

func (s *mcpTools) getCollectionTool(_ context.Context, c *fiber.Ctx, a getCollectionArgs) (collectionItemsJSON, string, error) {
	id, err := collectionArg(a.CollectionID)
	if err != nil {
		return collectionItemsJSON{}, "", err
	}
	pr, err := collections.ItemsBounds.Check(paging.Ask{Limit: a.Limit, Cursor: a.Cursor})
	if err != nil {
		return collectionItemsJSON{}, "", err
	}
	out, err := s.colls.collectionView(c, id, collections.ItemsQuery{Limit: pr.Limit, Cursor: pr.Cursor})
	if err != nil {
		return collectionItemsJSON{}, "", err
	}
	owned, retired := 0, 0
	for _, v := range out.Items {
		if v.Owned {
			owned++
		}
		if v.Retired {
			retired++
		}
	}
	summary := fmt.Sprintf("Collection %q: %s in all; %d on this page in the order added (%d owned, %d retired).",
		out.Name, plural(out.ItemCount, "clip"), len(out.Items), owned, retired)
	if out.Pagination.NextCursor != nil {
		summary += " More with cursor=pagination.next_cursor."
	}
	return out, summary, nil
}

// collectionArg reads a collection_id argument.
func collectionArg(raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(strings.TrimSpace(raw))
	if err != nil {
		return uuid.Nil, apperr.InvalidField("collection_id", "collection_id %q is not a UUID", apperr.Clip(raw))
	}
	return id, nil
}
