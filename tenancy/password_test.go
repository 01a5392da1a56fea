package tenancy

import (
	"strings"
	"testing"
)

func TestPasswordHashing(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Count(h, "$") != 5 {
		t.Fatalf("not a PHC argon2id string: %q", h)
	}
	h2, _ := HashPassword("correct horse battery staple")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: no salt?")
	}
	for _, c := range []struct {
		password string
		want     bool
	}{
		{"correct horse battery staple", true},
		{"correct horse battery stapl", false},
		{"Correct horse battery staple", false},
		{"", false},
	} {
		ok, err := VerifyPassword(h, c.password)
		if err != nil || ok != c.want {
			t.Errorf("verify %q: %v %v, want %v", c.password, ok, err, c.want)
		}
	}
	// The parameters are read from the hash, so older settings still verify.
	if ok, err := VerifyPassword(dummyHash, "anything"); err != nil || ok {
		t.Fatalf("dummy hash: %v %v", ok, err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "$argon2id$v=19$m=19456,t=2,p=1$!!$!!"} {
		if _, err := VerifyPassword(bad, "x"); err == nil {
			t.Errorf("VerifyPassword accepted %q", bad)
		}
	}
}

func TestPasswordRules(t *testing.T) {
	t.Parallel()
	for pw, ok := range map[string]bool{
		"short":                         false,
		"            ":                  false,
		"twelve chars":                  true,
		strings.Repeat("x", 256):        true,
		strings.Repeat("x", 257):        false,
		"ünïcödé pässwörd":              true,
		string([]byte{0xff, 0xfe, 'a'}): false,
	} {
		if err := CheckPassword(pw); (err == nil) != ok {
			t.Errorf("CheckPassword(%q): %v", pw, err)
		}
	}
}
