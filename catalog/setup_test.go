package catalog

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"broll/internal/testkit"
)

type bundle struct {
	ctx  context.Context
	svc  *Service
	pool *pgxpool.Pool
}

func setup(t *testing.T) bundle {
	t.Helper()
	pool, _ := testkit.NewPool(t)
	return bundle{ctx: context.Background(), svc: NewService(ServiceOptions{Pool: pool}), pool: pool}
}
