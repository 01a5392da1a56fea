package search

import (
	"testing"

	"broll/catalog/catalogtest"
)

// fixture is catalogtest's small imported catalog with this package's
// search over it.
type fixture struct {
	*catalogtest.Fixture
	svc *Service
}

type fixClip = catalogtest.Clip

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := catalogtest.NewFixture(t)
	return &fixture{Fixture: f, svc: New(f.Cat)}
}

func (f *fixture) search(t *testing.T, q Query) Page {
	t.Helper()
	p, err := f.svc.Search(f.Ctx, q, f.QE)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return p
}

func ptr[T any](v T) *T { return &v }
