package dashboard

import (
	"bufio"
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"broll/billing"
	"broll/internal/paging"
	"broll/tenancy"
)

const purchasesPerPage = 50

// keyChoices caps the keys offered in the purchases filter; the table's
// key links filter by any key.
const keyChoices = 500

type purchasesView struct {
	Listing billing.Listing
	Filter  purchaseFilter
	Keys    []tenancy.Key
	Pager   pager
	CSVLink string
	KeyName string // the filtered key's name, when not among Keys
	Test    bool   // test purchases (?mode=test)
}

type purchaseFilter struct {
	StartDate, EndDate, APIKeyID string
}

func (f purchaseFilter) values() url.Values {
	v := url.Values{}
	for k, val := range map[string]string{"start_date": f.StartDate, "end_date": f.EndDate, "api_key_id": f.APIKeyID} {
		if val != "" {
			v.Set(k, val)
		}
	}
	return v
}

// params turns the page's filter into the API's listing parameters, so the
// page validates and totals exactly like GET /api/v1/broll/purchases.
func (f purchaseFilter) params(page paging.Request) billing.ListParams {
	return billing.ListParams{StartDate: f.StartDate, EndDate: f.EndDate, APIKeyID: f.APIKeyID, Page: page}
}

func readFilter(c *fiber.Ctx) purchaseFilter {
	return purchaseFilter{
		StartDate: strings.TrimSpace(c.Query("start_date")), EndDate: strings.TrimSpace(c.Query("end_date")),
		APIKeyID: strings.TrimSpace(c.Query("api_key_id")),
	}
}

// Purchases lists the account's purchases under the page's filter.
func (h *Dashboard) Purchases(c *fiber.Ctx) error {
	ctx := c.UserContext()
	sess := session(c)
	owner, test, err := modeOwner(c)
	if err != nil {
		return err
	}
	f := readFilter(c)
	// The page size is the page's own; only ?page= comes from the link.
	page, err := paging.Parse(url.Values{"limit": {strconv.Itoa(purchasesPerPage)}, "page": {c.Query("page")}}, billing.ListBounds)
	if err != nil {
		return err
	}
	q, err := f.params(page).Parse(owner)
	if err != nil {
		return err
	}
	listing, err := h.Billing.ListPurchases(ctx, owner, q, nil)
	if err != nil {
		return err
	}
	keys, err := h.Tenancy.AccountKeys(ctx, sess.AccountID, keyChoices)
	if err != nil {
		return err
	}
	v := purchasesView{Listing: listing, Filter: f, Keys: keys, Test: test,
		Pager: newPager(Prefix+"/purchases", modeValues(f.values(), test), listing.Total, purchasesPerPage, q.Offset/purchasesPerPage+1)}
	if q.KeyID != nil {
		v.KeyName = h.keyName(ctx, sess.AccountID, *q.KeyID, keys)
	}
	v.CSVLink = Prefix + "/purchases.csv"
	if enc := modeValues(f.values(), test).Encode(); enc != "" {
		v.CSVLink += "?" + enc
	}
	return h.show(c, http.StatusOK, "purchases", view{
		Title: "Purchases", Nav: "purchases", Session: sess, Data: v,
		Mode: newModeSwitch(Prefix+"/purchases", f.values(), test),
	})
}

// keyName names the filtered key when the picker does not list it.
func (h *Dashboard) keyName(ctx context.Context, accountID, id uuid.UUID, listed []tenancy.Key) string {
	for _, k := range listed {
		if k.ID == id {
			return ""
		}
	}
	if k, err := h.Tenancy.AccountKey(ctx, accountID, id); err == nil {
		return displayName(k)
	}
	return id.String()
}

var csvHeader = []string{"purchased_at", "purchase_id", "video_id", "video_title", "api_key_id", "customer_label",
	"legacy", "customer_email", "price_paid", "currency"}

// PurchasesCSV exports every purchase of the filter (not just a page),
// oldest first, streamed as rows arrive. Its price_paid column adds up to
// the page's total, which is summary.total_amount of the API. Live
// purchases only, unless ?mode=test asks for the test ones.
func (h *Dashboard) PurchasesCSV(c *fiber.Ctx) error {
	sess := session(c)
	owner, test, err := modeOwner(c)
	if err != nil {
		return err
	}
	f := readFilter(c)
	q, err := f.params(paging.Request{}).Parse(owner)
	if err != nil {
		return err
	}
	if q.KeyID != nil {
		// Refuse another account's key before the response starts.
		if _, err := h.Tenancy.AccountKey(c.UserContext(), sess.AccountID, *q.KeyID); err != nil {
			return err
		}
	}
	name := "purchases"
	if test {
		name = "test_purchases"
	}
	if f.StartDate != "" || f.EndDate != "" {
		name += "_" + f.StartDate + "_" + f.EndDate
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`.csv"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	reqID := h.RequestID(c)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// The stream outlives the handler: it gets its own deadline.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cw := csv.NewWriter(w)
		_ = cw.Write(csvHeader)
		rows := 0
		err := h.Billing.ExportPurchases(ctx, owner, q, func(r billing.PurchaseRecord) error {
			keyID, email := "", ""
			if r.APIKeyID != nil {
				keyID = r.APIKeyID.String()
			}
			if r.CustomerEmail != nil {
				email = *r.CustomerEmail
			}
			rows++
			if err := cw.Write([]string{r.PurchasedAt.UTC().Format(time.RFC3339), r.PurchaseID.String(), r.VideoID.String(),
				cell(r.Video.Title), keyID, cell(r.CustomerLabel), strconv.FormatBool(r.Legacy), cell(email),
				r.PricePaid.String(), "USD"}); err != nil {
				return err
			}
			if rows%500 == 0 {
				cw.Flush()
				return w.Flush()
			}
			return nil
		})
		if err != nil {
			h.Logger.Error("purchases export failed", "request_id", reqID, "rows", rows, "error", err.Error())
			// A cut-off file must not pass for a complete one.
			_ = cw.Write([]string{"# export incomplete: an error stopped it after " + strconv.Itoa(rows) + " rows; download it again"})
		}
		cw.Flush()
		_ = w.Flush()
	})
	return nil
}

// cell defuses text that a spreadsheet would run as a formula (labels and
// titles come from API clients and content teams).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// LicensePDF is the certificate of a licence of the account, as a purchase's
// key gets it from GET /api/v1/licenses/{id}.pdf; another account's is 404.
func (h *Dashboard) LicensePDF(c *fiber.Ctx) error {
	pdf, name, err := h.Licenses.CertificateFor(c.UserContext(), tenancy.AccountOwner(session(c).AccountID), c.Params("license_id"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, `inline; filename="`+name+`"`)
	return c.Send(pdf)
}
