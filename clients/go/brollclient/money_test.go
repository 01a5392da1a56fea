package brollclient

import (
	"strconv"
	"testing"
)

// Every amount the API can send, as JSON decoding turns it into a float64,
// rounds back to its cents, and Dollars encodes back to the same decimal:
// every cent up to 20000.00 and the cents around large amounts up to the
// service's maximum (10000000.00) and beyond, to 2^53 cents' neighbourhood.
func TestCentsRoundTripsEveryAmount(t *testing.T) {
	check := func(c int64) {
		s := FormatCents(c)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := Cents(f); got != c {
			t.Fatalf("Cents(%s) = %d, want %d", s, got, c)
		}
		if got := strconv.FormatFloat(Dollars(c), 'f', -1, 64); got != trimZeros(s) {
			t.Fatalf("Dollars(%d) encodes as %s, want %s", c, got, s)
		}
	}
	for c := int64(0); c <= 2_000_000; c++ {
		check(c)
	}
	for _, base := range []int64{123456789, 999999999, 1_000_000_000, 90_071_992_547_409} {
		for c := base - 1000; c <= base+1000; c++ {
			check(c)
		}
	}
}

func trimZeros(s string) string {
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

func TestFormatCents(t *testing.T) {
	for c, want := range map[int64]string{0: "0.00", 5: "0.05", -5: "-0.05", 123456789: "1234567.89", 1000: "10.00"} {
		if got := FormatCents(c); got != want {
			t.Errorf("FormatCents(%d) = %q, want %q", c, got, want)
		}
	}
}
