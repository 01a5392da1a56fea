package brollclient

import (
	"fmt"
	"math"
)

// Cents converts a dollar amount as the API sends it (a JSON number with at
// most two decimals, decoded into a float64) to integer cents, rounding to
// the nearest cent: 1234567.89 is 123456789 even though the float64 nearest
// to it is a hair below. Do arithmetic on the cents, never on the floats.
// NaN and infinities, which no API response carries, give 0.
func Cents(amount float64) int64 {
	if math.IsNaN(amount) || math.IsInf(amount, 0) {
		return 0
	}
	return int64(math.Round(amount * 100))
}

// Dollars converts integer cents to the dollar amount to send in a request
// (e.g. PurchaseRequest.ExpectedTotal): the float64 nearest to cents/100,
// which encodes as the exact decimal ("1234567.89").
func Dollars(cents int64) float64 {
	return float64(cents) / 100
}

// FormatCents renders cents as a dollar amount with two decimals, e.g.
// "1234567.89" or "-0.05", for display and logs.
func FormatCents(cents int64) string {
	sign := ""
	u := uint64(cents)
	if cents < 0 {
		sign, u = "-", uint64(-cents)
	}
	return fmt.Sprintf("%s%d.%02d", sign, u/100, u%100)
}
