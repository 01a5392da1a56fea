package seal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	s, err := New("current-secret-0123456789abcdef0123", "")
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("whsec_c2VjcmV0")
	sealed := s.Seal("webhook-secret", secret)
	if strings.Contains(sealed, string(secret)) || !IsSealed(sealed) {
		t.Fatalf("sealed value %q shows its plaintext or lacks the prefix", sealed)
	}
	if again := s.Seal("webhook-secret", secret); again == sealed {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	got, err := s.Open("webhook-secret", sealed)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}

	t.Run("another purpose does not open it", func(t *testing.T) {
		if _, err := s.Open("idempotent-replay", sealed); !errors.Is(err, ErrOpen) {
			t.Fatalf("err = %v, want ErrOpen", err)
		}
	})
	t.Run("a tampered value does not open", func(t *testing.T) {
		b := []byte(sealed)
		b[len(b)-3] ^= 1
		if _, err := s.Open("webhook-secret", string(b)); !errors.Is(err, ErrOpen) {
			t.Fatalf("err = %v, want ErrOpen", err)
		}
		for _, bad := range []string{"", "whsec_plain", prefix, prefix + "!!", prefix + "AAAA"} {
			if _, err := s.Open("webhook-secret", bad); !errors.Is(err, ErrOpen) {
				t.Fatalf("Open(%q) err = %v, want ErrOpen", bad, err)
			}
		}
	})
	t.Run("the previous secret still opens after a rotation", func(t *testing.T) {
		rotated, err := New("next-secret-0123456789abcdef01234567", "current-secret-0123456789abcdef0123")
		if err != nil {
			t.Fatal(err)
		}
		got, err := rotated.Open("webhook-secret", sealed)
		if err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("Open after rotation = %q, %v", got, err)
		}
		other, _ := New("unrelated-secret-0123456789abcdef012", "")
		if _, err := other.Open("webhook-secret", sealed); !errors.Is(err, ErrOpen) {
			t.Fatalf("another secret opened it: %v", err)
		}
	})
	if _, err := New("", ""); err == nil {
		t.Fatal("New without a secret succeeded")
	}
}
