package api

// The response bodies the tests read, written from the contract (API.md and
// api/openapi.json), not from the handlers' types: a field renamed on the
// server is an unknown field here, and decode fails the test. Members the
// server leaves out when empty carry omitempty here too, so that decode's
// round trip (the type gives back the body) holds. Money is in dollars, as
// on the wire.

// problem is the RFC 9457 body of every error, with the extension members
// the tests read. Problems carry other extensions too, so it is decoded
// without the unknown-field check (see problemOf).
type problem struct {
	Type          string   `json:"type"`
	Title         string   `json:"title"`
	Status        int      `json:"status"`
	Detail        string   `json:"detail"`
	Code          string   `json:"code"`
	RequestID     string   `json:"request_id"`
	Field         string   `json:"field"`
	AllowedValues []string `json:"allowed_values"`
	RequiredScope string   `json:"required_scope"`
	Required      float64  `json:"required"`
	Available     float64  `json:"available"`
}

// videoBody is the Video object.
type videoBody struct {
	ID                   string     `json:"id"`
	Title                string     `json:"title"`
	Description          string     `json:"description"`
	Tags                 []string   `json:"tags"`
	Emotion              string     `json:"emotion"`
	Gender               string     `json:"gender"`
	AgeRange             *string    `json:"age_range"`
	Location             *string    `json:"location"`
	MediaType            string     `json:"media_type"`
	Orientation          *string    `json:"orientation"`
	DurationSeconds      *float64   `json:"duration_seconds"`
	Width                *int       `json:"width"`
	Height               *int       `json:"height"`
	FPS                  *float64   `json:"fps"`
	Difficulty           string     `json:"difficulty"`
	Price                float64    `json:"price"`
	Currency             string     `json:"currency"`
	ViralityScore        *int       `json:"virality_score"`
	Model                *modelBody `json:"model"`
	PreviewURL           string     `json:"preview_url"`
	ThumbnailURL         *string    `json:"thumbnail_url"`
	Owned                bool       `json:"owned"`
	DownloadURL          *string    `json:"download_url"`
	DownloadURLExpiresAt *string    `json:"download_url_expires_at,omitempty"`
	Similarity           *float64   `json:"similarity,omitempty"`
	CreatedAt            string     `json:"created_at"`
	Retired              bool       `json:"retired,omitempty"`
}

type modelBody struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// pageBody is the offset paging of the video and purchase lists, with the
// keyset cursor beside it.
type pageBody struct {
	Limit      int     `json:"limit"`
	Offset     int     `json:"offset"`
	Page       int     `json:"page"`
	Total      int     `json:"total"`
	HasMore    bool    `json:"has_more"`
	TotalExact *bool   `json:"total_exact,omitempty"` // video lists only
	NextCursor *string `json:"next_cursor"`
}

// videoList is GET /api/v1/broll.
type videoList struct {
	Videos     []videoBody `json:"videos"`
	Pagination pageBody    `json:"pagination"`
}

func (l videoList) titles() []string {
	out := make([]string, len(l.Videos))
	for i, v := range l.Videos {
		out[i] = v.Title
	}
	return out
}

// purchaseRecord is one row of the purchases list.
type purchaseRecord struct {
	PurchaseID           string  `json:"purchase_id"`
	VideoID              string  `json:"video_id"`
	APIKeyID             *string `json:"api_key_id"`
	CustomerLabel        string  `json:"customer_label"`
	PricePaid            float64 `json:"price_paid"`
	Currency             string  `json:"currency"`
	PurchasedAt          string  `json:"purchased_at"`
	DownloadURL          *string `json:"download_url"`
	DownloadURLExpiresAt *string `json:"download_url_expires_at"`
	DownloadRevoked      bool    `json:"download_revoked"`
	Video                struct {
		ID              string   `json:"id"`
		Title           string   `json:"title"`
		Emotion         string   `json:"emotion"`
		Gender          string   `json:"gender"`
		Difficulty      string   `json:"difficulty"`
		MediaType       string   `json:"media_type"`
		DurationSeconds *float64 `json:"duration_seconds"`
		Retired         bool     `json:"retired"`
	} `json:"video"`
	Legacy        bool     `json:"legacy"`
	Livemode      bool     `json:"livemode"`
	CustomerEmail *string  `json:"customer_email"`
	Similarity    *float64 `json:"similarity,omitempty"`
}

// purchaseList is GET /api/v1/broll/purchases.
type purchaseList struct {
	Purchases []purchaseRecord `json:"purchases"`
	Summary   struct {
		TotalAmount float64 `json:"total_amount"`
		Currency    string  `json:"currency"`
		Count       int     `json:"count"`
		StartDate   *string `json:"start_date"`
		EndDate     *string `json:"end_date"`
	} `json:"summary"`
	Pagination pageBody `json:"pagination"`
}

type valueCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// filtersBody is GET /api/v1/broll/filters.
type filtersBody struct {
	Emotion     []valueCount `json:"emotion"`
	Gender      []valueCount `json:"gender"`
	AgeRange    []valueCount `json:"age_range"`
	Location    []valueCount `json:"location"`
	MediaType   []valueCount `json:"media_type"`
	Orientation []valueCount `json:"orientation"`
	Difficulty  []struct {
		Name     string  `json:"name"`
		Price    float64 `json:"price"`
		Currency string  `json:"currency"`
		Count    int     `json:"count"`
	} `json:"difficulty"`
	Models []struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Count int    `json:"count"`
	} `json:"models"`
}
