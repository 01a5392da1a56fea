package api

import (
	"testing"

	"github.com/google/uuid"
)

// FuzzPurchaseOrder feeds arbitrary bytes to the REST purchase body
// (purchaseBody, with collection_id): no input may panic, every refusal
// is a 400, and an accepted body names clips or a collection, never both,
// exactly as sent.
func FuzzPurchaseOrder(f *testing.F) {
	id := uuid.NewString()
	for _, seed := range []string{
		`{"collection_id": "` + id + `"}`,
		`{"collection_id": "` + id + `", "expected_total": 12.5, "dry_run": true}`,
		`{"collection_id": "` + id + `", "video_ids": ["` + id + `"]}`,
		`{"collection_id": "` + id + `", "video_ids": []}`,
		`{"collection_id": null}`, `{"collection_id": ""}`, `{"collection_id": 7}`, `{"collection_id": ["` + id + `"]}`,
		`{"collection_id": "nope"}`, `{"COLLECTION_ID": "` + id + `", "collection_id": "` + id + `"}`,
		`{"collection_id": "` + id + `", "expected_total": -1}`, `{"video_ids": ["` + id + `"]}`, `{}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in purchaseBody
		if err := decodeBody(body, &in); err != nil {
			requireClientError(t, "decode", body, err)
			return
		}
		o, err := in.order()
		if err != nil {
			requireClientError(t, "order", body, err)
			return
		}
		switch {
		case in.CollectionID != nil:
			want, err := uuid.Parse(*in.CollectionID)
			if err != nil || o.CollectionID != want || in.VideoIDs != nil || len(o.Request.VideoIDs) != 0 {
				t.Fatalf("%q: collection order %+v", body, o)
			}
		case o.CollectionID != uuid.Nil || len(o.Request.VideoIDs) != len(in.VideoIDs) || len(o.Request.VideoIDs) == 0:
			t.Fatalf("%q: clip order %+v", body, o)
		}
		if o.Request.DryRun != in.DryRun || (in.ExpectedTotal == nil) != (o.Request.ExpectedTotal == nil) {
			t.Fatalf("%q: dry_run or expected_total changed: %+v", body, o)
		}
	})
}
