package admission

import (
	"testing"

	"github.com/google/uuid"
)

// TestHoldsForgetSafely: once the subjects held pass the bound, the holds
// start again from empty, and a pass issued before trusts nothing, not even
// a subject whose hold was forgotten; a pass issued after trusts what has
// not been held since.
func TestHoldsForgetSafely(t *testing.T) {
	h := newHolds()
	first := Owned(uuid.New())
	h.take([]Subject{first})
	before := h.now()
	many := make([]Subject, maxHeldSubjects-1)
	for i := range many {
		many[i] = Owned(uuid.New())
	}
	h.take(many) // the bound, reached
	h.take([]Subject{Owned(uuid.New())})
	if len(h.last) != 1 {
		t.Fatalf("%d subjects remembered past the bound of %d, want the last hold's alone", len(h.last), maxHeldSubjects)
	}
	for _, s := range []Subject{first, Catalog} {
		if !h.since(s, before) {
			t.Errorf("a pass from before the holds were forgotten trusts %+v", s)
		}
	}
	after := h.now()
	if h.since(Catalog, after) || h.since(first, after) {
		t.Error("a pass issued after the last hold trusts nothing")
	}
	h.take([]Subject{first})
	if !h.since(first, after) || h.since(Catalog, after) {
		t.Error("a hold after the pass: it must end the trust in what it held, only that")
	}
}
