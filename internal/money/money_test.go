package money

import (
	"encoding/json"
	"testing"
)

func TestParseDollars(t *testing.T) {
	good := map[string]Cents{"5": 500, "12.5": 1250, "12.50": 1250, "0": 0, "0.01": 1, "100000": 10000000}
	for in, want := range good {
		got, err := ParseDollars(in)
		if err != nil || got != want {
			t.Errorf("ParseDollars(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.234", "abc", "1.", ".5", "1e3", "99999999999", "1,00"} {
		if _, err := ParseDollars(in); err == nil {
			t.Errorf("ParseDollars(%q) accepted", in)
		}
	}
}

func TestJSON(t *testing.T) {
	b, _ := json.Marshal(struct{ A Cents }{1250})
	if string(b) != `{"A":12.50}` {
		t.Fatalf("got %s", b)
	}
	var v struct{ A Cents }
	if err := json.Unmarshal([]byte(`{"A":7.5}`), &v); err != nil || v.A != 750 {
		t.Fatalf("got %d %v", v.A, err)
	}
	if err := json.Unmarshal([]byte(`{"A":"7"}`), &v); err == nil {
		t.Fatal("string accepted")
	}
}
