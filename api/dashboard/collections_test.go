package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"broll/billing/billingtest"
	"broll/collections"
	"broll/tenancy"
)

// collection makes a collection of key p holding clips, through the
// service the API's routes call.
func (e *env) collection(t *testing.T, p tenancy.Principal, name string, clips ...uuid.UUID) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	c, err := e.collections.Create(ctx, p, collections.CreateRequest{Name: name})
	if err != nil {
		t.Fatalf("create collection %q: %v", name, err)
	}
	if len(clips) > 0 {
		if _, err := e.collections.AddItems(ctx, p, c.ID, clips); err != nil {
			t.Fatalf("add to %q: %v", name, err)
		}
	}
	return c.ID
}

var collectionRowRe = regexp.MustCompile(`(?s)<tr data-collection-id="([^"]+)">(.*?)</tr>`)

// collectionRows are the collection rows of a page: id -> the row's text.
func collectionRows(body string) ([]string, map[string]string) {
	var order []string
	rows := map[string]string{}
	for _, m := range collectionRowRe.FindAllStringSubmatch(body, -1) {
		order = append(order, m[1])
		rows[m[1]] = html.UnescapeString(m[2])
	}
	return order, rows
}

// TestCollectionsPage: the collections page lists every collection of the
// account's keys (root and customers, every root key), newest first, with
// its key, clip count and last change; test keys' collections only under
// ?mode=test; never another account's; read-only; paged by cursor; and
// behind the dashboard's sign-in.
func TestCollectionsPage(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	mine := e.tenant(t, "Mine Co", 10000)
	theirs := e.tenant(t, "Theirs Co", 10000)
	sibling := mine.AnotherRoot(t, e.pool, "Second integration")
	testKey := mine.TestKey(t, e.pool, "sandbox customer")
	revoked := mine.CustomerKey(t, e.pool, "Leaving customer")
	vids := e.videos(t, "easy", "Harbour at dawn", "Cafe laughter", "Rooftop rain")

	rootCol := e.collection(t, mine.Root, "Root shortlist", vids[0])
	custCol := e.collection(t, billingtest.Principal(mine.Account, mine.Customer), "Customer picks <b>", vids[1], vids[2], vids[0])
	siblingCol := e.collection(t, sibling.Root, "Sibling root's board")
	goneCol := e.collection(t, billingtest.Principal(mine.Account, revoked), "Left behind", vids[2])
	testCol := e.collection(t, billingtest.Principal(mine.Account, testKey), "Sandbox shortlist", vids[1])
	theirCol := e.collection(t, billingtest.Principal(theirs.Account, theirs.Customer), "Rival shortlist", vids[0])
	if s := e.api(t, "DELETE", "/api/v1/keys?id="+revoked.ID.String(), mine.RootKey.Secret, ""); s != http.StatusOK {
		t.Fatalf("revoke: %d", s)
	}

	t.Run("signed out, the page sends you to sign in", func(t *testing.T) {
		p := e.browser().get(t, "/dashboard/collections")
		if p.status != http.StatusSeeOther || p.location() != "/dashboard/sign-in?next=%2Fdashboard%2Fcollections" {
			t.Fatalf("signed-out collections page: %d %q", p.status, p.location())
		}
	})

	b := e.signedIn(t, mine)
	t.Run("every live collection of the account, newest first, with its key, count and last change", func(t *testing.T) {
		p := b.get(t, "/dashboard/collections")
		if p.status != http.StatusOK || !strings.Contains(p.body, "<h1>Collections</h1>") ||
			!strings.Contains(p.body, `aria-current="page">Collections</a>`) {
			t.Fatalf("collections page: %d %.500s", p.status, p.body)
		}
		order, rows := collectionRows(p.body)
		want := []string{goneCol.String(), siblingCol.String(), custCol.String(), rootCol.String()}
		if strings.Join(order, " ") != strings.Join(want, " ") {
			t.Fatalf("rows %v, want %v", order, want)
		}
		for id, w := range map[uuid.UUID][]string{
			rootCol:    {"Root shortlist", ">root<", ">1<"},
			custCol:    {"Customer picks <b>", "Mine Co customer", ">3<", "/dashboard/collections?api_key_id=" + mine.Customer.ID.String()},
			siblingCol: {"Sibling root's board", "Second integration", ">0<"},
			goneCol:    {"Left behind", "Leaving customer", "revoked", ">1<"},
		} {
			for _, s := range w {
				if !strings.Contains(rows[id.String()], s) {
					t.Errorf("row of %s lacks %q: %s", id, s, rows[id.String()])
				}
			}
		}
		if strings.Contains(p.body, "Customer picks <b>") {
			t.Error("a collection's name is not escaped")
		}
		for _, leak := range []string{"Sandbox shortlist", "Rival shortlist", theirCol.String(), testCol.String(), "Theirs Co"} {
			if strings.Contains(p.body, leak) {
				t.Errorf("the live page shows %q", leak)
			}
		}
		// Read-only: nothing is posted from the page but signing out.
		if n := strings.Count(p.body, `method="post"`); n != 2 {
			t.Errorf("%d post forms on the page, want only the two sign-out forms", n)
		}
	})

	t.Run("test keys' collections under mode=test", func(t *testing.T) {
		p := b.get(t, "/dashboard/collections?mode=test")
		order, _ := collectionRows(p.body)
		if p.status != http.StatusOK || strings.Join(order, " ") != testCol.String() || !strings.Contains(p.body, "test-banner") {
			t.Fatalf("test collections: %d %v", p.status, order)
		}
		if !strings.Contains(p.body, `href="/dashboard/collections"`) {
			t.Error("no link back to the live collections")
		}
	})

	t.Run("pages follow the cursor", func(t *testing.T) {
		cust := billingtest.Principal(mine.Account, mine.Customer)
		var made []string
		for i := range collections.DefaultPageSize {
			made = append(made, e.collection(t, cust, fmt.Sprintf("Board %02d", i)).String())
		}
		first := b.get(t, "/dashboard/collections")
		order, _ := collectionRows(first.body)
		if len(order) != collections.DefaultPageSize || order[0] != made[len(made)-1] {
			t.Fatalf("first page: %d rows: %v", len(order), order)
		}
		next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
		if next == nil {
			t.Fatal("no link to the next page")
		}
		second := b.get(t, html.UnescapeString(next[1]))
		order, _ = collectionRows(second.body)
		want := []string{goneCol.String(), siblingCol.String(), custCol.String(), rootCol.String()}
		if second.status != http.StatusOK || strings.Join(order, " ") != strings.Join(want, " ") ||
			strings.Contains(second.body, `rel="next"`) || !strings.Contains(second.body, `rel="first"`) {
			t.Fatalf("second page: %d %v", second.status, order)
		}
	})

	t.Run("narrowed to one key of the account", func(t *testing.T) {
		for key, want := range map[uuid.UUID][]uuid.UUID{
			revoked.ID:         {goneCol},
			sibling.RootKey.ID: {siblingCol},
			mine.RootKey.ID:    {rootCol},
		} {
			p := b.get(t, "/dashboard/collections?api_key_id="+key.String())
			order, _ := collectionRows(p.body)
			if p.status != http.StatusOK || len(order) != len(want) || order[0] != want[0].String() ||
				!strings.Contains(p.body, `<option value="`+key.String()+`" selected`) {
				t.Errorf("key %s: %d %v, want %v", key, p.status, order, want)
			}
		}
		p := b.get(t, "/dashboard/collections?mode=test&api_key_id="+testKey.ID.String())
		if order, _ := collectionRows(p.body); strings.Join(order, " ") != testCol.String() {
			t.Errorf("the test key's: %v", order)
		}
	})

	t.Run("bad input is a 4xx page, another account's key a 404", func(t *testing.T) {
		for path, status := range map[string]int{
			"/dashboard/collections?cursor=nonsense":                           http.StatusBadRequest,
			"/dashboard/collections?mode=sandbox":                              http.StatusBadRequest,
			"/dashboard/collections?api_key_id=alice":                          http.StatusBadRequest,
			"/dashboard/collections?api_key_id=" + theirs.Customer.ID.String(): http.StatusNotFound,
			"/dashboard/collections?api_key_id=" + uuid.NewString():            http.StatusNotFound,
		} {
			if p := b.get(t, path); p.status != status || !strings.Contains(p.body, "<h1>") || strings.Contains(p.body, "Rival shortlist") {
				t.Errorf("%s: %d, want %d", path, p.status, status)
			}
		}
	})

	t.Run("another account's user sees only theirs", func(t *testing.T) {
		p := e.signedIn(t, theirs).get(t, "/dashboard/collections")
		order, _ := collectionRows(p.body)
		if strings.Join(order, " ") != theirCol.String() {
			t.Fatalf("their page: %v", order)
		}
	})
}
