package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"broll/internal/apperr"
	"broll/internal/classify"
	"broll/internal/money"
)

// FuzzPurchaseBody feeds arbitrary bytes to the purchase body decoder of
// REST (decodeBody) and of the MCP tool (decodeArgs), then to order():
// no input may panic, every refusal must be a 400-class application error,
// and an accepted body must give exactly the ids (or the collection),
// total and flag it holds.
// The seeds run with every `go test`; `make fuzz` explores further.
func FuzzPurchaseBody(f *testing.F) {
	id := uuid.NewString()
	for _, seed := range []string{
		`{"video_ids": ["` + id + `"]}`,
		`{"video_ids": ["` + id + `", "` + id + `"], "expected_total": 12.50, "dry_run": true}`,
		`{"video_ids": ["{` + id + `}", "urn:uuid:` + id + `"]}`,
		`{"video_ids": []}`, `{}`, `null`, `[]`, `""`, ``, ` `, `{`, `{"video_ids": [`,
		`{"video_ids": "` + id + `"}`, `{"video_ids": [7]}`, `{"video_ids": [null]}`, `{"video_ids": ["nope"]}`,
		`{"video_ids": ["` + id + `"], "expected_total": 1e400}`,
		`{"video_ids": ["` + id + `"], "expected_total": -1}`,
		`{"video_ids": ["` + id + `"], "expected_total": 1.234}`,
		`{"video_ids": ["` + id + `"], "expected_total": "5"}`,
		`{"video_ids": ["` + id + `"], "expected_total": 9223372036854775808}`,
		`{"video_ids": ["` + id + `"], "dry_run": "yes"}`,
		`{"video_ids": ["` + id + `"], "source": "x"}`,
		`{"VIDEO_IDS": ["` + id + `"]}`,
		`{"video_ids": ["` + id + `"], "video_ids": 7}`,
		`{"video_ids": ["` + id + `"]} {}`, `{"video_ids": ["` + id + `"]}x`,
		"\xef\xbb\xbf{}", `{"video_ids": ["\u0000"]}`, "{\"video_ids\": [\"\xff\"]}",
		`{"video_ids": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"collection_id": "` + id + `"}`,
		`{"collection_id": "` + id + `", "expected_total": 0, "dry_run": true}`,
		`{"collection_id": "` + id + `", "video_ids": ["` + id + `"]}`,
		`{"collection_id": "` + id + `", "video_ids": []}`,
		`{"collection_id": null}`, `{"collection_id": ""}`, `{"collection_id": 7}`, `{"collection_id": "nope"}`,
		`{"collection_id": "00000000-0000-0000-0000-000000000000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var rest purchaseBody
		checkPurchase(t, "REST", body, decodeBody(body, &rest), rest)
		var args purchaseVideosArgs
		checkPurchase(t, "MCP", body, decodeArgs(body, &args), args.body())
	})
}

func checkPurchase(t *testing.T, via string, body []byte, decodeErr error, in purchaseBody) {
	t.Helper()
	if decodeErr != nil {
		requireClientError(t, via+" decode", body, decodeErr)
		return
	}
	o, err := in.order()
	if err != nil {
		requireClientError(t, via+" order", body, err)
		return
	}
	req := o.Request
	if (in.CollectionID != nil) != (o.CollectionID != uuid.Nil) || (in.CollectionID != nil && in.VideoIDs != nil) {
		t.Fatalf("%s %q: collection %v from %v with ids %v", via, body, o.CollectionID, in.CollectionID, in.VideoIDs)
	}
	if in.CollectionID != nil {
		if want, err := uuid.Parse(*in.CollectionID); err != nil || o.CollectionID != want || len(req.VideoIDs) != 0 {
			t.Fatalf("%s %q: collection %s, %d ids", via, body, o.CollectionID, len(req.VideoIDs))
		}
	}
	if len(req.VideoIDs) != len(in.VideoIDs) || len(req.VideoIDs) > 500 {
		t.Fatalf("%s %q: %d ids from %d", via, body, len(req.VideoIDs), len(in.VideoIDs))
	}
	for i, raw := range in.VideoIDs {
		if want, err := uuid.Parse(raw); err != nil || req.VideoIDs[i] != want {
			t.Fatalf("%s %q: id %d is %s from %q", via, body, i, req.VideoIDs[i], raw)
		}
	}
	if (in.ExpectedTotal == nil) != (req.ExpectedTotal == nil) {
		t.Fatalf("%s %q: expected_total dropped or invented", via, body)
	}
	if req.ExpectedTotal != nil && (*req.ExpectedTotal < 0 || *req.ExpectedTotal > money.MaxCents) {
		t.Fatalf("%s %q: expected_total %d cents", via, body, *req.ExpectedTotal)
	}
	if req.DryRun != in.DryRun {
		t.Fatalf("%s %q: dry_run changed", via, body)
	}
	// What was accepted decodes the same way again once re-encoded: no
	// information hides in how the body was written.
	again, _ := json.Marshal(in)
	var in2 purchaseBody
	if err := decodeBody(again, &in2); err != nil {
		t.Fatalf("%s %q: re-encoded body %s refused: %v", via, body, again, err)
	}
	if o2, err := in2.order(); err != nil || len(o2.Request.VideoIDs) != len(req.VideoIDs) || o2.CollectionID != o.CollectionID {
		t.Fatalf("%s %q: re-encoded body gives %v, %v", via, body, o2, err)
	}
}

func requireClientError(t *testing.T, what string, body []byte, err error) {
	t.Helper()
	ae, ok := apperr.As(err)
	if !ok {
		t.Fatalf("%s %q: %v is not an application error (would be a 500)", what, body, err)
	}
	if classify.Status(ae.Code) != http.StatusBadRequest {
		t.Fatalf("%s %q: %s is status %d, want 400", what, body, ae.Code, classify.Status(ae.Code))
	}
}
