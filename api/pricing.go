package api

import (
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"broll/catalog"
	"broll/internal/money"
)

type tierJSON struct {
	Name     string      `json:"name"`
	Price    money.Cents `json:"price"`
	Currency string      `json:"currency"`
}

// tierCache keeps the price list of GET /api/v1/pricing for a second: it
// changes rarely and is read often. Purchases never use it; they price
// inside their own statement.
type tierCache struct {
	mu      sync.Mutex
	tiers   []catalog.Tier
	fetched time.Time
}

const tierCacheTTL = time.Second

func (s *clipsAPI) pricing(c *fiber.Ctx) error {
	now := s.now()
	s.tiers.mu.Lock()
	tiers, fresh := s.tiers.tiers, now.Sub(s.tiers.fetched) < tierCacheTTL
	s.tiers.mu.Unlock()
	if !fresh {
		var err error
		if tiers, err = s.catalog.ListTiers(c.UserContext()); err != nil {
			return err
		}
		s.tiers.mu.Lock()
		s.tiers.tiers, s.tiers.fetched = tiers, now
		s.tiers.mu.Unlock()
	}
	out := make([]tierJSON, len(tiers))
	for i, t := range tiers {
		out[i] = tierJSON{Name: t.Name, Price: t.PriceCents, Currency: "USD"}
	}
	return c.JSON(fiber.Map{"currency": "USD", "tiers": out})
}
