package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"broll/billing/billingtest"
	"broll/internal/apperr"
)

// TestDuplicateMemberNames: a member named twice in one object, at any
// depth, also when the names differ only in case (or in how they are
// escaped), is 400 invalid_request naming the member, on every reader of
// JSON: request bodies and MCP tool arguments. Names that are not the same
// once case is folded, and the same name in two different objects, pass.
func TestDuplicateMemberNames(t *testing.T) {
	t.Parallel()
	type limit struct {
		Amount *json.Number `json:"amount"`
		Period string       `json:"period"`
	}
	type body struct {
		VideoIDs   []string         `json:"video_ids"`
		DryRun     bool             `json:"dry_run"`
		SpendLimit *limit           `json:"spend_limit"`
		Metadata   map[string]any   `json:"metadata"`
		Items      []map[string]any `json:"items"`
	}
	refused := []struct{ body, field string }{
		{`{"video_ids":["X"],"VIDEO_IDS":["Y"]}`, "VIDEO_IDS"},
		{`{"VIDEO_IDS":["Y"],"video_ids":["X"]}`, "video_ids"},
		{`{"video_ids":["X"],"video_ids":["Y"]}`, "video_ids"},
		{`{"video_ids":["X"],"\u0076ideo_ids":["Y"]}`, "video_ids"},
		{`{"video_ids":["X"],"Video_Ids":["X"]}`, "Video_Ids"},
		{`{"dry_run":true,"video_ids":[],"DRY_RUN":false}`, "DRY_RUN"},
		{`{"spend_limit":{"amount":5,"AMOUNT":50}}`, "spend_limit.AMOUNT"},
		{`{"metadata":{"a":{"b":1,"B":2}}}`, "metadata.a.B"},
		{`{"metadata":{"k":1,"\u212a":2}}`, "metadata.\u212a"}, // KELVIN SIGN folds to k
		{`{"items":[{"x":1},{"y":1,"y":2}]}`, "items[1].y"},
	}
	for _, c := range refused {
		var dst body
		err := decodeBody([]byte(c.body), &dst)
		ae, ok := apperr.As(err)
		if !ok || ae.Code != apperr.Invalid || ae.Field != c.field || !strings.Contains(ae.Message, "twice") {
			t.Errorf("body %s: %v (field %q), want invalid_request on %q", c.body, err, fieldOf(err), c.field)
		}
		var args body
		err = decodeArgs(json.RawMessage(c.body), &args)
		if ae, ok := apperr.As(err); !ok || ae.Code != apperr.Invalid || ae.Field != c.field {
			t.Errorf("MCP arguments %s: %v, want invalid_request on %q", c.body, err, c.field)
		}
	}
	accepted := []string{
		`{"video_ids":["X"],"dry_run":true}`,
		`{"metadata":{"a":1,"b":1,"a_":1,"ä":1,"Ä_":1}}`,
		`{"items":[{"x":1},{"x":2}],"metadata":{"items":[{"x":1}]}}`,
		`{"metadata":{"video_ids":1},"video_ids":["X"]}`,
	}
	for _, b := range accepted {
		var dst body
		if err := decodeBody([]byte(b), &dst); err != nil {
			t.Errorf("body %s: %v, want accepted", b, err)
		}
	}
}

func fieldOf(err error) string {
	if ae, ok := apperr.As(err); ok {
		return ae.Field
	}
	return ""
}

// TestDuplicateNamesEverySurface: every route that reads a JSON body
// refuses one that names a member twice, in two cases, as 400
// invalid_request naming the member, and changes nothing.
func TestDuplicateNamesEverySurface(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	n := e.legacyNode(t, newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))) // before the v0 sunset
	acct := billingtest.NewAccount(t, e.pool, billingtest.AccountOpts{Credits: 5000})
	clips := billingtest.Videos(t, e.pool, 2, "easy")
	customer := acct.CustomerKey(t, e.pool, "kept")
	ops, err := e.ctl.Tenancy.CreateOpsKey(context.Background(), "content team")
	if err != nil {
		t.Fatal(err)
	}
	root, opsKey := bearerHeader(acct.RootKey.Secret), bearerHeader(ops.Secret)
	for _, c := range []struct {
		method, path string
		header       map[string]string
		body, field  string
	}{
		{"PATCH", "/api/v1/keys?id=" + customer.ID.String(), root, `{"customer_label":"a","Customer_Label":"b"}`, "Customer_Label"},
		{"POST", "/api/v1/webhooks", root,
			`{"url":"https://hooks.example.com/a","events":["purchase.completed"],"URL":"https://hooks.example.com/b"}`, "URL"},
		{"POST", "/api/ops/v1/videos", opsKey, `[{"title":"a","Title":"b"}]`, "[0].Title"},
		{"POST", "/api/ops/v1/uploads", opsKey, `{"filename":"a.mp4","content_type":"video/mp4","size":10,"SIZE":20}`, "SIZE"},
		{"POST", "/api/external/broll/purchase", map[string]string{"X-API-Key": testLegacySecret},
			fmt.Sprintf(`{"source":%q,"video_ids":[%q],"VIDEO_IDS":[%q]}`, acct.Source, clips[0], clips[1]), "VIDEO_IDS"},
	} {
		r := e.send(t, n, c.method, c.path, c.header, c.body)
		if r.status != 400 || problemOf(t, r).Code != "invalid_request" || deref(problemOf(t, r).Field) != c.field {
			t.Errorf("%s %s %s: %d %s", c.method, c.path, c.body, r.status, r.raw)
		}
	}
	var changed int
	if err := e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM purchases) + (SELECT count(*) FROM webhook_endpoints)
		+ (SELECT count(*) FROM api_keys WHERE label IN ('a', 'b'))`).Scan(&changed); err != nil || changed != 0 {
		t.Errorf("%d rows written by refused bodies (%v)", changed, err)
	}
}

// BenchmarkUniqueNames: the name check's cost beside the decoding it
// precedes, on a 50-clip purchase and on a 1 MiB import of clip objects.
func BenchmarkUniqueNames(b *testing.B) {
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
	}
	purchase, _ := json.Marshal(map[string]any{"video_ids": ids, "expected_total": 250, "dry_run": true})
	clip := `{"title":"Woman laughing at her phone","description":"A close shot in a cafe","tags":["phone","cafe","laugh"],` +
		`"emotion":"laughing","gender":"female","age_range":"25-34","location":"Lisbon","difficulty":"easy","file":"clips/a.mp4"},`
	imp := []byte("[" + strings.Repeat(clip, (1<<20)/len(clip)))
	imp[len(imp)-1] = ']'
	for _, c := range []struct {
		name string
		body []byte
	}{{"purchase", purchase}, {"import_1MiB", imp}} {
		b.Run(c.name+"/names", func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if err := uniqueNames(c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(c.body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFoldNameIsEqualFold: two names fold alike exactly when
// strings.EqualFold, the equality encoding/json matches names by, says
// they are equal; checked over every pair of short names made of letters
// whose case orbits hold more than two runes or leave ASCII.
func TestFoldNameIsEqualFold(t *testing.T) {
	t.Parallel()
	letters := []rune("kK\u212asS\u017f\u00df\u1e9e\u03a3\u03c3\u03c2\u00b5\u03bc\u039ciI\u0130\u0131a_\u00e5\u00c5\u212b")
	var names []string
	for _, a := range letters {
		names = append(names, string(a))
		for _, b := range letters {
			names = append(names, string(a)+string(b))
		}
	}
	for _, a := range names {
		for _, b := range names {
			if (foldName(a) == foldName(b)) != strings.EqualFold(a, b) {
				t.Fatalf("%q and %q: fold alike %t, EqualFold %t", a, b, foldName(a) == foldName(b), strings.EqualFold(a, b))
			}
		}
	}
}
