package api

import (
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/billing"
	"broll/billing/license"
	"broll/internal/money"
	"broll/internal/paging"
)

type purchaseVideoJSON struct {
	ID              uuid.UUID `json:"id"`
	Title           string    `json:"title"`
	Emotion         string    `json:"emotion"`
	Gender          string    `json:"gender"`
	Difficulty      string    `json:"difficulty"`
	MediaType       string    `json:"media_type"`
	DurationSeconds *float64  `json:"duration_seconds"`
	Retired         bool      `json:"retired"`
}

type purchaseRecordJSON struct {
	PurchaseID           uuid.UUID   `json:"purchase_id"`
	VideoID              uuid.UUID   `json:"video_id"`
	APIKeyID             *uuid.UUID  `json:"api_key_id"`
	CustomerLabel        string      `json:"customer_label"`
	PricePaid            money.Cents `json:"price_paid"`
	Currency             string      `json:"currency"`
	PurchasedAt          time.Time   `json:"purchased_at"`
	DownloadURL          *string     `json:"download_url"`
	DownloadURLExpiresAt *time.Time  `json:"download_url_expires_at"`
	// DownloadRevoked: the purchase's key was revoked, and its links with
	// it, or its licence was; download_url is null rather than a link that
	// answers 403.
	DownloadRevoked bool              `json:"download_revoked"`
	Video           purchaseVideoJSON `json:"video"`
	Legacy          bool              `json:"legacy"`
	Livemode        bool              `json:"livemode"` // false: a test key's purchase
	CustomerEmail   *string           `json:"customer_email"`
	Similarity      *float64          `json:"similarity,omitempty"`
	// License names the purchase's licence (absent in legacy v0 answers).
	License *license.Ref `json:"license,omitempty"`
}

type paginationJSON struct {
	Limit   int  `json:"limit"`
	Offset  int  `json:"offset"`
	Page    int  `json:"page"`
	Total   int  `json:"total"`
	HasMore bool `json:"has_more"`
}

// purchasePaginationJSON is a purchase list's paging: the offset fields,
// and next_cursor to continue after the page (null on the last).
type purchasePaginationJSON struct {
	paginationJSON
	NextCursor *string `json:"next_cursor"`
}

func purchasePagination(l billing.Listing) purchasePaginationJSON {
	limit, offset := l.Query.Limit, l.Query.Offset
	out := purchasePaginationJSON{paginationJSON: paginationJSON{Limit: limit, Offset: offset,
		Page: offset/limit + 1, Total: l.Total, HasMore: l.HasMore}}
	if l.NextCursor != "" {
		out.NextCursor = &l.NextCursor
	}
	return out
}

type purchaseListJSON struct {
	Purchases []purchaseRecordJSON `json:"purchases"`
	Summary   struct {
		TotalAmount money.Cents `json:"total_amount"`
		Currency    string      `json:"currency"`
		Count       int         `json:"count"`
		StartDate   *string     `json:"start_date"`
		EndDate     *string     `json:"end_date"`
	} `json:"summary"`
	Pagination purchasePaginationJSON `json:"pagination"`
}

func day(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.Format("2006-01-02")
	return &s
}

// renderListing writes a page of purchases; lic names the licences (nil:
// none shown, as in the legacy v0 answers).
func renderListing(l billing.Listing, lic *license.Service) purchaseListJSON {
	var out purchaseListJSON
	out.Purchases = make([]purchaseRecordJSON, 0, len(l.Purchases))
	for _, r := range l.Purchases {
		var url *string
		var expires *time.Time
		if !r.DownloadRevoked {
			url, expires = &r.Download.URL, &r.Download.ExpiresAt
		}
		rec := purchaseRecordJSON{
			PurchaseID: r.PurchaseID, VideoID: r.VideoID, APIKeyID: r.APIKeyID, CustomerLabel: r.CustomerLabel,
			PricePaid: r.PricePaid, Currency: "USD", PurchasedAt: r.PurchasedAt,
			DownloadURL: url, DownloadURLExpiresAt: expires, DownloadRevoked: r.DownloadRevoked,
			Video: purchaseVideoJSON{ID: r.Video.ID, Title: r.Video.Title, Emotion: r.Video.Emotion, Gender: r.Video.Gender,
				Difficulty: r.Video.Difficulty, MediaType: r.Video.MediaType, DurationSeconds: r.Video.DurationSeconds,
				Retired: r.Video.Retired},
			Legacy: r.Legacy, Livemode: r.Livemode, CustomerEmail: r.CustomerEmail, Similarity: r.Similarity,
		}
		if lic != nil {
			ref := lic.Ref(r.LicenseID, r.LicenseRevoked)
			rec.License = &ref
		}
		out.Purchases = append(out.Purchases, rec)
	}
	out.Summary.TotalAmount, out.Summary.Currency, out.Summary.Count = l.Amount, "USD", l.Total
	out.Summary.StartDate, out.Summary.EndDate = day(l.Query.Start), day(l.Query.End)
	out.Pagination = purchasePagination(l)
	return out
}

func (s *purchasesAPI) listPurchases(c *fiber.Ctx) error {
	page, err := paging.Parse(queryValues(c), billing.ListBounds)
	if err != nil {
		return err
	}
	params := billing.ListParams{
		StartDate: c.Query("start_date"), EndDate: c.Query("end_date"),
		Search: c.Query("search"), SemanticSearch: c.Query("semantic_search"),
		Emotion: c.Query("emotion"), APIKeyID: c.Query("api_key_id"), LicenseStatus: c.Query("license_status"), Page: page,
	}
	p := principal(c)
	q, err := params.Parse(p)
	if err != nil {
		return err
	}
	l, err := s.billing.ListPurchases(c.UserContext(), p, q, s.queryEmbedder)
	if err != nil {
		return err
	}
	return c.JSON(renderListing(l, s.licenses))
}
