package billing

import (
	"errors"
	"strconv"
	"strings"

	"broll/internal/apperr"
)

// parsePaging reads a purchase listing's limit (default 50; above 500 is
// clamped, however large; below 1 or not a number is 400) and either a
// 1-based page or an offset, and refuses a page that ends past
// maxListWindow with a 400 that says how to get there instead.
func parsePaging(limit, page, offset string) (int, int, error) {
	l := defaultListLimit
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(limit, "-") {
			n, err = maxListLimit, nil
		}
		if err != nil || n < 1 {
			return 0, 0, apperr.InvalidField("limit", "limit must be a whole number of at least 1, got %q", limit)
		}
		l = min(n, maxListLimit)
	}
	if page != "" && offset != "" {
		return 0, 0, apperr.InvalidField("page", "use either page or offset, not both")
	}
	field, off := "offset", 0
	if page != "" {
		field = "page"
		n, err := strconv.Atoi(page)
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(page, "-") {
			return 0, 0, windowError(field)
		}
		if err != nil || n < 1 {
			return 0, 0, apperr.InvalidField("page", "page must be a whole number from 1, got %q", page)
		}
		// Bounded before multiplying so a huge page cannot overflow.
		if n > maxListWindow {
			return 0, 0, windowError(field)
		}
		off = (n - 1) * l
	}
	if offset != "" {
		n, err := strconv.Atoi(offset)
		if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(offset, "-") {
			return 0, 0, windowError(field)
		}
		if err != nil || n < 0 {
			return 0, 0, apperr.InvalidField("offset", "offset must be a whole number from 0, got %q", offset)
		}
		off = n
	}
	if off > maxListWindow-l {
		return 0, 0, windowError(field)
	}
	return l, off, nil
}

func windowError(field string) error {
	return apperr.InvalidField(field, "purchases are paged up to the first %d (offset + limit); "+
		"narrow the dates (start_date, end_date) or the filters to reach the others", maxListWindow).
		With("max_result_window", maxListWindow)
}
