package tenancy

import (
	"context"
	"testing"

	"broll/internal/paging"
)

// BenchmarkCustomerKeyPage lists pages of 100 of a root key's 5,000
// customer keys, with unflushed counts in Redis for every key on them: the
// first page, and the 40th reached by cursor.
// Run: go test -run '^$' -bench CustomerKeyPage -benchtime 200x ./tenancy/
func BenchmarkCustomerKeyPage(b *testing.B) {
	bb := setup(b)
	ctx := context.Background()
	root := bb.account(b)
	bb.bulkKeys(b, root, 5000)
	if _, err := bb.pool.Exec(ctx, `ANALYZE api_keys`); err != nil {
		b.Fatal(err)
	}
	q, err := KeyListParams{}.Parse()
	if err != nil {
		b.Fatal(err)
	}
	first := q
	for page := 1; page < 40; page++ {
		p, err := bb.svc.CustomerKeyPage(ctx, root, q, bb.usage)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range p.Keys {
			bb.admit(b, Principal{KeyID: k.ID, AccountID: root.AccountID, Kind: KindCustomer}, 1)
		}
		if q, err = (KeyListParams{Page: paging.Request{Cursor: p.NextCursor}}).Parse(); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		q    KeyListQuery
	}{{"first", first}, {"page40_by_cursor", q}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if p, err := bb.svc.CustomerKeyPage(ctx, root, bc.q, bb.usage); err != nil || len(p.Keys) != 100 {
					b.Fatalf("%v, %d keys", err, len(p.Keys))
				}
			}
		})
	}
}
