package admission_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"broll/internal/admission"
)

// TestPassTrustsUntilAHold: a pass trusts the catalog and what its own key
// owns, as its admission read them; a hold taken in this process after the
// admission ends its trust in what was held, and in nothing else, at once
// (before the hold's release, and whichever caller took it); the next
// admission trusts again.
func TestPassTrustsUntilAHold(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	admit := func() admission.Pass {
		t.Helper()
		d, err := b.gate.Admit(ctx, p)
		if err != nil || d.Fallback {
			t.Fatalf("admission: %+v %v", d, err)
		}
		return d.Pass
	}
	trusts := func(pass admission.Pass, s admission.Subject) bool {
		v, ok := pass.Version(s)
		if ok != (v != "") {
			t.Fatalf("version %q with ok %v", v, ok)
		}
		return ok
	}
	pass := admit()
	if !trusts(pass, admission.Catalog) || !trusts(pass, admission.Owned(p.KeyID)) {
		t.Fatal("a fresh pass trusts neither the catalog nor its key's purchases")
	}
	if trusts(pass, admission.Owned(uuid.New())) || trusts(admission.Pass{}, admission.Catalog) {
		t.Fatal("a pass trusts another key's purchases, or the zero pass trusts the catalog")
	}

	h := b.gate.Hold(ctx, admission.Owned(p.KeyID))
	if trusts(pass, admission.Owned(p.KeyID)) {
		t.Error("the pass still trusts what its key owns after a hold of it")
	}
	if !trusts(pass, admission.Catalog) {
		t.Error("a hold of what the key owns ended the pass's trust in the catalog")
	}
	if trusts(admit(), admission.Owned(p.KeyID)) {
		t.Error("a pass issued while the hold lasts trusts what it holds")
	}
	h.Release(ctx)
	if trusts(pass, admission.Owned(p.KeyID)) {
		t.Error("the release gave the pass issued before the hold its trust back")
	}
	if after := admit(); !trusts(after, admission.Owned(p.KeyID)) || !trusts(after, admission.Catalog) {
		t.Error("a pass issued after the release trusts less than a fresh one")
	}
}

// TestAdmissionWithoutCopiesReadsNoMarks: a request that reads no copies
// (a purchase, a key change) is admitted, limited and counted as any other,
// but its admission does not touch the marks in Redis (it neither reads
// nor writes their tokens) and its pass trusts nothing.
func TestAdmissionWithoutCopiesReadsNoMarks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p := b.account(t)
	tokens := func() int64 {
		t.Helper()
		keys, err := b.rdb.Keys(ctx, b.prefix+"mark:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		return int64(len(keys))
	}
	d, err := b.gate.AdmitWithoutCopies(ctx, p)
	if err != nil || !d.Allowed || d.Fallback || d.Remaining != 59 {
		t.Fatalf("admission without copies: %+v %v", d, err)
	}
	if _, ok := d.Pass.Version(admission.Catalog); ok {
		t.Error("the pass of an admission without copies trusts the catalog")
	}
	if _, ok := d.Pass.Version(admission.Owned(p.KeyID)); ok {
		t.Error("the pass of an admission without copies trusts what its key owns")
	}
	if n := tokens(); n != 0 {
		t.Errorf("an admission without copies wrote %d mark keys", n)
	}
	d, err = b.gate.Admit(ctx, p)
	if err != nil || !d.Allowed || d.Remaining != 58 {
		t.Fatalf("the admission after it: %+v %v", d, err)
	}
	if _, ok := d.Pass.Version(admission.Catalog); !ok {
		t.Error("an admission with copies does not trust the catalog")
	}
	if n := tokens(); n != 2 {
		t.Errorf("an admission with copies left %d mark keys, want the catalog's token and the key's", n)
	}
}
