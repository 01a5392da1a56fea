package billing

import (
	"net/url"

	"broll/internal/paging"
)

// listBounds are a purchase listing's paging limits: limit default 50,
// clamped to 500 however large; offset + limit bounded by maxListWindow (a
// cursor goes further).
var listBounds = paging.Bounds{DefaultLimit: defaultListLimit, MaxLimit: maxListLimit, Window: maxListWindow}

// parsePaging reads a purchase listing's limit, page or offset, and cursor
// through the paging parser every list shares, so that they mean the same
// here as on the catalog.
func parsePaging(limit, page, offset, cursor string) (paging.Request, error) {
	return paging.Parse(url.Values{"limit": {limit}, "page": {page}, "offset": {offset}, "cursor": {cursor}}, listBounds)
}
