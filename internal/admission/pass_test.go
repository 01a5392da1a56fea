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
