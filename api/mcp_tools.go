package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/billing"
	"broll/billing/license"
	"broll/catalog"
	"broll/catalog/search"
	"broll/internal/apperr"
	"broll/internal/idempotency"
	"broll/internal/paging"
	"broll/tenancy"
)

// The MCP tools. Each parses its arguments into the same domain
// request REST builds, calls the same catalog/billing code and returns the
// same body; only the summary line is MCP's own.
func (s *mcpTools) addMCPTools(srv *toolSet) {
	// The catalog and the account are the whole world of these tools. A
	// purchase spends balance that does not come back: destructive, so that
	// hosts ask the user before calling it, and idempotent, since buying
	// the same clips again charges nothing. The read tools are idempotent
	// too, said explicitly: hosts that retry a failed call, or run one
	// without asking, look at idempotentHint, which defaults to false.
	openWorld, destructive := false, true
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &openWorld}

	addTool(s, srv, &mcp.Tool{Name: "search_videos", Title: "Search B-roll clips", Annotations: read,
		Description: "Search and browse the B-roll catalog. Describe the shot you need in semantic_search (ranked by meaning, " +
			"results carry similarity) or give keywords in search, and narrow with any filters. Each video has its id, " +
			"title, price in USD, a free preview_url and thumbnail_url to show the user, owned, and a download_url when " +
			"this key already bought it. Searching and previews are free; to buy, quote with purchase_videos (dry_run=true)."},
		tenancy.ScopeBrollRead, refineSearchSchema, s.searchVideosTool)

	addTool(s, srv, &mcp.Tool{Name: "get_video", Title: "Get a B-roll clip", Annotations: read,
		Description: "Get one clip by its id: every detail, its price in USD, the free preview, and a fresh download_url " +
			"if this key already owns it (owned=true)."},
		tenancy.ScopeBrollRead, refineGetVideoSchema, s.getVideoTool)

	addTool(s, srv, &mcp.Tool{Name: "find_similar_videos", Title: "Find B-roll clips like one clip", Annotations: read,
		Description: "More like this: the clips nearest in meaning to one clip (video_id, as returned by search_videos or " +
			"get_video), best first, each with its similarity (1 is identical); the clip itself is left out. Use it when the " +
			"user likes a clip and wants alternatives or more of the same. Narrow with the same filters as search_videos " +
			"(emotion, gender, orientation, ...); page with cursor=pagination.next_cursor. The result is the same list as " +
			"search_videos (prices in USD, free previews, owned, download_url when owned). A clip added moments ago may " +
			"fail with not_embedded (retryable): wait retry_after_seconds and call again."},
		tenancy.ScopeBrollRead, refineSimilarSchema, s.findSimilarVideosTool)

	addTool(s, srv, &mcp.Tool{Name: "purchase_videos", Title: "Buy B-roll clips (spends the balance)",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &destructive, OpenWorldHint: &openWorld},
		Description: "Buy full-quality downloads of 1 to " + strconv.Itoa(billing.MaxVideosPerPurchase) + " clips (video_ids), " +
			"or of every clip of a collection this key can see that it does not own yet (collection_id; give exactly one of " +
			"the two), paid from the account's balance; each clip costs its difficulty tier's price. Always quote first: call " +
			"with dry_run=true, tell the user total_charged and the balance, and only once they agree call again with the same " +
			"video_ids or collection_id and expected_total set to the quoted total_charged. If a price changed in between " +
			"(or the collection did), that call fails with " +
			"price_changed and charges nothing: quote again. All or nothing: an unknown id (not_found) or a short balance " +
			"(insufficient_credits) charges nothing, and so does a purchase that would take this key past its spend limit " +
			"(spend_limit_exceeded, with limit, spent, required and period_resets_at: tell the user; get_balance shows the limit). Clips this key already owns come back with already_owned=true and a " +
			"fresh link and are never charged twice, so repeating a call is safe; give each purchase an idempotency_key of your " +
			"own and repeat a call whose answer was lost with the same key and arguments, and it answers that call's purchases " +
			"(same purchase ids and total_charged) instead of already_owned. Buying a collection lists in skipped the " +
			"clips it did not charge (retired, unavailable or already_owned). Each purchase licenses one end user: " +
			"the files must not be shared, resold or redistributed. A test-mode key (dsk_test_) buys from the account's test " +
			"balance instead (livemode=false in the result): nothing real is spent and its links serve the clip's preview."},
		tenancy.ScopeBrollPurchase, refinePurchaseSchema, s.purchaseVideosTool)

	addTool(s, srv, &mcp.Tool{Name: "list_purchases", Title: "List purchases", Annotations: read,
		Description: "Purchase history for billing and for finding files bought earlier: each purchase with the clip, " +
			"price paid, time, the key (customer) that bought it and a fresh download link. summary.total_amount and " +
			"summary.count cover every purchase matching the filters, not just this page, so they can go on an invoice. " +
			"A customer key sees its own purchases; a root key sees those of all its customer keys and may narrow to one " +
			"with api_key_id."},
		tenancy.ScopeBrollBilling, refineListPurchasesSchema, s.listPurchasesTool)

	addTool(s, srv, &mcp.Tool{Name: "get_balance", Title: "Account balance", Annotations: read,
		Description: "Account summary: the balance in USD shared by all keys of the account, which key is calling " +
			"(root or customer, with its label; a customer key also its spend_limit and what it spent in that limit's period, " +
			"with when the period resets), and this month's purchases visible to the key (count and amount). " +
			"Check it before quoting a large purchase. For a test-mode key (livemode=false) the balance is the account's test balance."},
		tenancy.ScopeBrollBilling, nil, s.getBalanceTool)

	s.addCollectionTools(srv, read)
}

// searchVideosArgs are the query parameters of GET /api/v1/broll as typed
// arguments.
type searchVideosArgs struct {
	SemanticSearch string   `json:"semantic_search,omitempty" jsonschema:"describe the wanted shot in plain words, e.g. 'woman laughing at her phone in a cafe'; matched by meaning, best first; not with search"`
	Search         string   `json:"search,omitempty" jsonschema:"keywords over title, description and tags; quotes for a phrase, -word to exclude, 'or' for either; not with semantic_search"`
	Emotion        string   `json:"emotion,omitempty" jsonschema:"emotion shown in the clip"`
	Gender         string   `json:"gender,omitempty" jsonschema:"gender of the person filmed"`
	AgeRange       string   `json:"age_range,omitempty" jsonschema:"age range of the person filmed"`
	Location       string   `json:"location,omitempty" jsonschema:"where the clip was filmed (exact name, case-insensitive)"`
	MediaType      string   `json:"media_type,omitempty" jsonschema:"video or still image"`
	Orientation    string   `json:"orientation,omitempty" jsonschema:"frame orientation; vertical suits stories and reels"`
	Difficulty     string   `json:"difficulty,omitempty" jsonschema:"price tier name, e.g. easy, medium or hard; the tier sets the price"`
	ModelID        string   `json:"model_id,omitempty" jsonschema:"only clips featuring this creator (the id of a video's model)"`
	MinDuration    *float64 `json:"min_duration,omitempty" jsonschema:"shortest duration in seconds"`
	MaxDuration    *float64 `json:"max_duration,omitempty" jsonschema:"longest duration in seconds"`
	MinVirality    *int     `json:"min_virality,omitempty" jsonschema:"lowest virality score, 0 to 100"`
	Owned          *bool    `json:"owned,omitempty" jsonschema:"true: only clips this key already bought; false: only clips it has not"`
	SortBy         string   `json:"sort_by,omitempty" jsonschema:"sort key; relevance (the default with search or semantic_search) needs a search, otherwise the default is created_at"`
	SortOrder      string   `json:"sort_order,omitempty" jsonschema:"asc or desc (default); relevance always lists the best match first"`
	Limit          *int     `json:"limit,omitempty" jsonschema:"results per page, default 20, at most 100"`
	Page           *int     `json:"page,omitempty" jsonschema:"1-based page number; use page or offset, not both"`
	Offset         *int     `json:"offset,omitempty" jsonschema:"results to skip; use page or offset, not both"`
	Cursor         string   `json:"cursor,omitempty" jsonschema:"pagination.next_cursor of the previous call with the same arguments: the next page; not with page or offset"`
}

// query is the arguments as a search.Query, paged against the catalog's
// bounds; Validate then checks it as it checks REST's.
func (a searchVideosArgs) query() (search.Query, error) {
	q := search.Query{Emotion: a.Emotion, Gender: a.Gender, AgeRange: a.AgeRange, Location: a.Location,
		MediaType: a.MediaType, Orientation: a.Orientation, Difficulty: a.Difficulty, ModelID: a.ModelID,
		MinDuration: a.MinDuration, MaxDuration: a.MaxDuration, MinVirality: a.MinVirality, Owned: a.Owned,
		Search: a.Search, SemanticSearch: a.SemanticSearch, SortBy: a.SortBy, SortOrder: a.SortOrder}
	pr, err := search.SearchBounds.Check(paging.Ask{Limit: a.Limit, Page: a.Page, Offset: a.Offset, Cursor: a.Cursor})
	if err != nil {
		return q, err
	}
	q.Limit, q.Offset, q.Cursor = pr.Limit, pr.Offset, pr.Cursor
	// Validate normalises q as it checks it: the caller gets the normalised q.
	err = q.Validate()
	return q, err
}

func refineSearchSchema(s *jsonschema.Schema) {
	p := s.Properties
	refineFilterSchema(p)
	p["sort_by"].Enum = schemaEnum(search.SortKeys()...)
	p["sort_order"].Enum = schemaEnum(search.SortAsc, search.SortDesc)
	for _, k := range []string{"search", "semantic_search"} {
		p[k].MaxLength = jsonschema.Ptr(search.MaxSearchChars)
	}
	p["page"].Minimum = jsonschema.Ptr(1.0)
	p["offset"].Minimum = jsonschema.Ptr(0.0)
}

// refineFilterSchema gives the list filters and limit, which search_videos
// and find_similar_videos share, their enums and bounds.
func refineFilterSchema(p map[string]*jsonschema.Schema) {
	p["emotion"].Enum = schemaEnum(catalog.Emotions()...)
	p["gender"].Enum = schemaEnum(catalog.Genders()...)
	p["age_range"].Enum = schemaEnum(catalog.AgeRanges()...)
	p["media_type"].Enum = schemaEnum(catalog.MediaTypes()...)
	p["orientation"].Enum = schemaEnum(catalog.Orientations()...)
	p["min_duration"].Minimum = jsonschema.Ptr(0.0)
	p["max_duration"].Minimum = jsonschema.Ptr(0.0)
	p["min_virality"].Minimum, p["min_virality"].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(100.0)
	p["limit"].Minimum, p["limit"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(search.MaxLimit))
	p["limit"].Default = json.RawMessage(strconv.Itoa(search.DefaultLimit))
}

func (s *mcpTools) searchVideosTool(ctx context.Context, c *fiber.Ctx, a searchVideosArgs) (brollListJSON, string, error) {
	q, err := a.query()
	if err != nil {
		return brollListJSON{}, "", err
	}
	page, out, err := s.clips.searchBroll(ctx, c, q)
	if err != nil {
		return out, "", err
	}

	matching := plural(page.Total, "clip")
	if !page.TotalExact {
		matching = "at least " + matching
	}
	summary := fmt.Sprintf("Matching: %s; %d on page %d.", matching, len(page.Videos), page.Page)
	if page.NextCursor != "" {
		summary += " More with cursor=pagination.next_cursor."
	} else if page.HasMore {
		summary += fmt.Sprintf(" More with page=%d.", page.Page+1)
	}
	return out, summary, nil
}

type getVideoArgs struct {
	VideoID string `json:"video_id" jsonschema:"the clip's id, as returned by search_videos"`
}

func refineGetVideoSchema(s *jsonschema.Schema) {
	s.Properties["video_id"].Format = "uuid"
}

func (s *mcpTools) getVideoTool(ctx context.Context, c *fiber.Ctx, a getVideoArgs) (videoJSON, string, error) {
	id, err := uuid.Parse(strings.TrimSpace(a.VideoID))
	if err != nil {
		return videoJSON{}, "", apperr.InvalidField("video_id", "video_id %q is not a UUID", apperr.Clip(a.VideoID))
	}
	v, bought, err := s.catalog.VideoForKey(ctx, id, principal(c).KeyID, pass(c))
	if err != nil {
		return videoJSON{}, "", err
	}
	vj, err := s.clips.renderClip(ctx, v, bought)
	if err != nil {
		return videoJSON{}, "", err
	}
	summary := fmt.Sprintf("%q: %s, %s tier, %s USD.", vj.Title, vj.Emotion, vj.Difficulty, vj.Price)
	switch {
	case vj.Owned && vj.DownloadURL == nil:
		summary += " Owned by this key, but its licence was revoked: the file is no longer delivered."
	case vj.Owned:
		summary += " Owned by this key; download_url is fresh."
	default:
		summary += " Not owned yet: quote it with purchase_videos (dry_run=true)."
	}
	return vj, summary, nil
}

// purchaseVideosArgs is purchaseBody with descriptions for the schema; the
// conversion in purchaseVideosTool keeps the two in step at compile time.
type purchaseVideosArgs struct {
	VideoIDs      []string     `json:"video_ids,omitempty" jsonschema:"ids of the clips to buy; duplicates count once; not with collection_id"`
	CollectionID  *string      `json:"collection_id,omitempty" jsonschema:"buy every clip of this collection that this key does not own yet and that is on sale, instead of video_ids"`
	ExpectedTotal *json.Number `json:"expected_total,omitempty" jsonschema:"the total_charged of the dry-run quote the user accepted, in USD; the purchase fails with price_changed and charges nothing if the total differs"`
	DryRun        bool         `json:"dry_run,omitempty" jsonschema:"true: only quote (total_charged, balance), charge nothing"`
	// IdempotencyKey is REST's Idempotency-Key as an argument, for the
	// purchase ids alone (billing.RetryPurchaseID): no answer is kept.
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"a key you make for this one purchase (a UUID, say) and send again only when you repeat this same call because its answer was lost: the repeat then returns the first call's purchases as bought by it (same purchase ids and total_charged) instead of already_owned with total_charged 0; nothing is ever charged twice either way"`
}

// body is the REST body the arguments stand for (the idempotency key aside,
// which REST takes as a header).
func (a purchaseVideosArgs) body() purchaseBody {
	return purchaseBody{VideoIDs: a.VideoIDs, CollectionID: a.CollectionID, ExpectedTotal: a.ExpectedTotal, DryRun: a.DryRun}
}

func refinePurchaseSchema(s *jsonschema.Schema) {
	ids := s.Properties["video_ids"]
	ids.MinItems, ids.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(billing.MaxVideosPerPurchase)
	ids.Items.Format = "uuid"
	s.Properties["collection_id"].Format = "uuid"
	s.Properties["expected_total"].Minimum = jsonschema.Ptr(0.0)
	s.Properties["dry_run"].Default = json.RawMessage("false")
	key := s.Properties["idempotency_key"]
	key.MinLength, key.MaxLength, key.Pattern = jsonschema.Ptr(1), jsonschema.Ptr(255), `^[\x20-\x7e]+$`
}

func (s *mcpTools) purchaseVideosTool(ctx context.Context, c *fiber.Ctx, a purchaseVideosArgs) (purchaseResultJSON, string, error) {
	order, err := a.body().order()
	if err != nil {
		return purchaseResultJSON{}, "", err
	}
	if a.IdempotencyKey != "" {
		if !idempotency.Valid(a.IdempotencyKey) {
			return purchaseResultJSON{}, "", apperr.InvalidField("idempotency_key",
				"idempotency_key must be 1 to 255 printable ASCII characters")
		}
		// As a REST purchase run again under its Idempotency-Key: the
		// purchases a first call made under this key are this call's.
		order.Request.RetryKey = a.IdempotencyKey
	}
	res, err := s.purchases.place(ctx, principal(c), order, "mcp")
	if err != nil {
		return purchaseResultJSON{}, "", err
	}
	owned := 0
	for _, p := range res.Purchases {
		if p.AlreadyOwned {
			owned++
		}
	}
	var summary string
	if res.DryRun {
		summary = fmt.Sprintf("Quote: %s USD for %s (%d already owned, free); balance %s USD. Nothing was charged. "+
			"To buy, call again with expected_total=%s once the user agrees.", res.TotalCharged, plural(len(res.Purchases), "clip"),
			owned, res.Balance, res.TotalCharged)
	} else {
		summary = fmt.Sprintf("Bought %s for %s USD (%d already owned, not charged again); balance %s USD. "+
			"Download links expire; ask again for fresh ones. Each clip's license.verify_url is the public proof of its "+
			"single-user licence to give the end user.", plural(len(res.Purchases), "clip"), res.TotalCharged, owned, res.Balance)
	}
	if res.Skipped != nil && len(*res.Skipped) > 0 {
		summary += fmt.Sprintf(" Skipped %s of the collection (see skipped: retired, unavailable or already owned), never charged.",
			plural(len(*res.Skipped), "clip"))
	}
	if !res.Livemode {
		summary += " Test mode: paid from the test balance; the links serve previews."
	}
	return res, summary, nil
}

// listPurchasesArgs are the query parameters of GET /api/v1/broll/purchases.
type listPurchasesArgs struct {
	StartDate      string `json:"start_date,omitempty" jsonschema:"first day, YYYY-MM-DD, inclusive, UTC"`
	EndDate        string `json:"end_date,omitempty" jsonschema:"last day, YYYY-MM-DD, inclusive, UTC"`
	Search         string `json:"search,omitempty" jsonschema:"keywords over the purchased clips; not with semantic_search"`
	SemanticSearch string `json:"semantic_search,omitempty" jsonschema:"describe the purchased clip in plain words; not with search"`
	Emotion        string `json:"emotion,omitempty" jsonschema:"emotion shown in the purchased clip"`
	APIKeyID       string `json:"api_key_id,omitempty" jsonschema:"root key only: purchases of this customer key"`
	LicenseStatus  string `json:"license_status,omitempty" jsonschema:"only the purchases whose licence is now active, or revoked"`
	Limit          *int   `json:"limit,omitempty" jsonschema:"purchases per page, default 50; larger values are clamped to 500"`
	Page           *int   `json:"page,omitempty" jsonschema:"1-based page number; use page or offset, not both"`
	Offset         *int   `json:"offset,omitempty" jsonschema:"purchases to skip; use page or offset, not both"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"pagination.next_cursor of the previous call with the same arguments: the next page, stable while new purchases arrive; not with page or offset"`
}

func refineListPurchasesSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["start_date"].Format, p["end_date"].Format = "date", "date"
	p["emotion"].Enum = schemaEnum(catalog.Emotions()...)
	p["api_key_id"].Format = "uuid"
	p["license_status"].Enum = schemaEnum(string(license.Active), string(license.Revoked))
	p["limit"].Minimum = jsonschema.Ptr(1.0)
	p["limit"].Default = json.RawMessage("50")
	p["page"].Minimum = jsonschema.Ptr(1.0)
	p["offset"].Minimum = jsonschema.Ptr(0.0)
}

func (s *mcpTools) listPurchasesTool(ctx context.Context, c *fiber.Ctx, a listPurchasesArgs) (purchaseListJSON, string, error) {
	page, err := billing.ListBounds.Check(paging.Ask{Limit: a.Limit, Page: a.Page, Offset: a.Offset, Cursor: a.Cursor})
	if err != nil {
		return purchaseListJSON{}, "", err
	}
	params := billing.ListParams{
		StartDate: a.StartDate, EndDate: a.EndDate, Search: a.Search, SemanticSearch: a.SemanticSearch,
		Emotion: a.Emotion, APIKeyID: a.APIKeyID, LicenseStatus: a.LicenseStatus, Page: page,
	}
	p := principal(c)
	q, err := params.Parse(p)
	if err != nil {
		return purchaseListJSON{}, "", err
	}
	l, err := s.billing.ListPurchases(ctx, p, q, s.queryEmbedder)
	if err != nil {
		return purchaseListJSON{}, "", err
	}
	out := renderListing(l, s.licenses)
	summary := fmt.Sprintf("Matching: %s, %s USD in total; %d on this page.", plural(out.Summary.Count, "purchase"),
		out.Summary.TotalAmount, len(out.Purchases))
	if out.Pagination.NextCursor != nil {
		summary += " More with cursor=pagination.next_cursor."
	}
	return out, summary, nil
}

type getBalanceArgs struct{}

func (s *mcpTools) getBalanceTool(_ context.Context, c *fiber.Ctx, _ getBalanceArgs) (balanceJSON, string, error) {
	out, err := s.purchases.balanceView(c)
	if err != nil {
		return out, "", err
	}
	balance := "Balance"
	if !out.Livemode {
		balance = "Test balance"
	}
	summary := fmt.Sprintf("%s %s USD. Since %s: %s for %s USD (visible to this %s key).", balance,
		out.Balance, out.MonthToDate.Since, plural(out.MonthToDate.Purchases, "purchase"), out.MonthToDate.Amount, out.Key.Kind)
	return out, summary, nil
}

// plural writes "1 clip", "3 clips".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
