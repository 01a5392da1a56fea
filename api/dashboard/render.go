package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/internal/money"
	"broll/tenancy"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/dashboard.css assets/dashboard.js
var assetFS embed.FS

// pages are the page templates; each is parsed with the layout into a set
// of its own, since every page defines the same "content" block.
var pages = []string{"signin", "setpassword", "overview", "keys", "rootkey", "keycreated", "revoke",
	"purchases", "collections", "balance", "webhooks", "error"}

// view is what every page template receives.
type view struct {
	Title   string
	Nav     string // the active navigation entry
	Assets  string // base path of the CSS and JS
	Session *tenancy.Session
	Account string // the account's name
	Notice  string // a one-line message above the content
	// Mode is the live/test switch of a page that shows money; nil on
	// the others.
	Mode *modeSwitch
	Data any
}

type renderer struct {
	pages  map[string]*template.Template
	assets map[string][]byte
	base   string // /dashboard/assets/<hash>
}

func newRenderer() (*renderer, error) {
	r := &renderer{pages: map[string]*template.Template{}, assets: map[string][]byte{}}
	h := sha256.New()
	for _, name := range []string{"dashboard.css", "dashboard.js"} {
		b, err := fs.ReadFile(assetFS, "assets/"+name)
		if err != nil {
			return nil, fmt.Errorf("dashboard assets: %w", err)
		}
		r.assets[name] = b
		h.Write([]byte(name))
		h.Write(b)
	}
	// The hash in the path lets browsers keep assets for ever and still
	// never pair a new page with an old script.
	r.base = "/dashboard/assets/" + hex.EncodeToString(h.Sum(nil))[:12]
	for _, p := range pages {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard templates: %w", err)
		}
		r.pages[p] = t
	}
	return r, nil
}

// show renders a page of a signed-in user, naming the account in the
// header.
func (h *Dashboard) show(c *fiber.Ctx, status int, page string, v view) error {
	if v.Session != nil && v.Account == "" {
		if acct, err := h.Tenancy.GetAccount(c.UserContext(), v.Session.AccountID); err == nil {
			v.Account = acct.Name
		}
	}
	return h.views.render(c, status, page, v)
}

// render writes a page with status. Pages carry keys, CSRF tokens and
// money, so no cache keeps them.
func (r *renderer) render(c *fiber.Ctx, status int, page string, v view) error {
	t, ok := r.pages[page]
	if !ok {
		return fmt.Errorf("dashboard: no page %q", page)
	}
	v.Assets = r.base
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return fmt.Errorf("dashboard: render %s: %w", page, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(buf.Bytes())
}

var funcs = template.FuncMap{
	"usd":       usd,
	"signedUSD": signedUSD,
	"when":      when,
	"whenOpt":   whenOpt,
	"day":       func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"scopes":    scopeNames,
	"count": func(n any) string {
		switch v := n.(type) {
		case int:
			return thousands(v)
		case int64:
			return thousands(v)
		}
		return fmt.Sprint(n)
	},
	"plural64": plural[int64],
	"plural":   plural[int],
}

// plural picks the word for n things.
func plural[T int | int64](n T, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// usd renders cents as dollars with thousands separators: "$1,234.50".
func usd(c money.Cents) string {
	s := c.String()
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(whole, 10, 64)
	return sign + "$" + thousands(n) + "." + frac
}

// signedUSD shows the direction of a ledger amount: "+$50.00", "-$10.00".
func signedUSD(c money.Cents) string {
	if c > 0 {
		return "+" + usd(c)
	}
	return usd(c)
}

func thousands[T int | int64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func whenOpt(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return when(*t)
}

func scopeNames(ss []tenancy.Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// pager is the previous/next navigation of a paged list.
type pager struct {
	Page, Pages int
	Prev, Next  string // URLs, empty at the ends
}

// newPager builds the links of page `page` of `total` rows by `limit`,
// keeping the other query parameters of base.
func newPager(path string, q url.Values, total, limit, page int) pager {
	p := pager{Page: page, Pages: max(1, (total+limit-1)/limit)}
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			if k != "page" && len(vs) > 0 && vs[0] != "" {
				v.Set(k, vs[0])
			}
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if page > 1 {
		p.Prev = link(min(page-1, p.Pages))
	}
	if page < p.Pages {
		p.Next = link(page + 1)
	}
	return p
}

// pageNumber reads a 1-based page number; anything else is page 1.
func pageNumber(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1_000_000 {
		return 1
	}
	return n
}
