package api

import (
	"github.com/gofiber/fiber/v2"

	"broll/internal/money"
)

type tierJSON struct {
	Name     string      `json:"name"`
	Price    money.Cents `json:"price"`
	Currency string      `json:"currency"`
}

func (s *server) pricing(c *fiber.Ctx) error {
	tiers, err := s.catalog.ListTiers(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]tierJSON, len(tiers))
	for i, t := range tiers {
		out[i] = tierJSON{Name: t.Name, Price: t.PriceCents, Currency: "USD"}
	}
	return c.JSON(fiber.Map{"currency": "USD", "tiers": out})
}
