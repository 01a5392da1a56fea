package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	base := map[string]string{"DATABASE_URL": "postgres://u@h/db", "REDIS_URL": "redis://h:6379/0"}
	for k, v := range m {
		base[k] = v
	}
	return func(k string) string { return base[k] }
}

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8080" || c.RateLimitPerMinute != 60 || c.EmbedModel != "nomic-embed-text" ||
		c.DownloadURLTTL != time.Hour || c.LegacySunset.Format("2006-01-02") != "2026-09-01" || c.EmbedProvider != "auto" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestDashboardDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionTTL != 8*time.Hour || c.SessionMaxAge != 7*24*time.Hour || c.SignInMaxFailures != 5 ||
		c.SignInLockout != 15*time.Minute || c.PasswordLinkTTL != 24*time.Hour || c.SecureCookies() {
		t.Fatalf("dashboard defaults: %+v", c)
	}
	c, err = Load(env(map[string]string{"BROLL_PUBLIC_URL": "HTTPS://broll.example.com", "BROLL_SESSION_TTL": "30m"}))
	if err != nil || !c.SecureCookies() || c.SessionTTL != 30*time.Minute {
		t.Fatalf("https public URL: %v %v", c.SecureCookies(), err)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	cases := map[string]map[string]string{
		"DATABASE_URL":                 {"DATABASE_URL": ""},
		"REDIS_URL":                    {"REDIS_URL": "http://x"},
		"BROLL_RATE_LIMIT_PER_MINUTE":  {"BROLL_RATE_LIMIT_PER_MINUTE": "sixty"},
		"BROLL_EMBED_PROVIDER":         {"BROLL_EMBED_PROVIDER": "magic"},
		"BROLL_SEMANTIC_EF_SEARCH":     {"BROLL_SEMANTIC_EF_SEARCH": "5"},
		"BROLL_DOWNLOAD_URL_TTL":       {"BROLL_DOWNLOAD_URL_TTL": "forever"},
		"BROLL_LEGACY_SUNSET":          {"BROLL_LEGACY_SUNSET": "09/01/2026"},
		"BROLL_SIGNING_KEY":            {"BROLL_SIGNING_KEY": "short"},
		"BROLL_PUBLIC_URL":             {"BROLL_PUBLIC_URL": "ftp://x"},
		"BROLL_LOG_LEVEL":              {"BROLL_LOG_LEVEL": "loud"},
		"BROLL_SESSION_TTL":            {"BROLL_SESSION_TTL": "10s"},
		"BROLL_SESSION_MAX_AGE":        {"BROLL_SESSION_TTL": "2h", "BROLL_SESSION_MAX_AGE": "1h"},
		"BROLL_SIGNIN_MAX_FAILURES":    {"BROLL_SIGNIN_MAX_FAILURES": "0"},
		"BROLL_SIGNIN_LOCKOUT":         {"BROLL_SIGNIN_LOCKOUT": "soon"},
		"BROLL_PASSWORD_LINK_TTL":      {"BROLL_PASSWORD_LINK_TTL": "1m"},
		"BROLL_TRUSTED_PROXIES":        {"BROLL_TRUSTED_PROXIES": "10.0.0.0/8, lb.internal"},
		"BROLL_EMBED_RETRY_BASE_DELAY": {"BROLL_EMBED_RETRY_BASE_DELAY": "1s", "BROLL_EMBED_RETRY_MAX_DELAY": "10ms"},
		"BROLL_ACCESS_LOG_SAMPLE":      {"BROLL_ACCESS_LOG_SAMPLE": "1.5"},
		"BROLL_ACCESS_LOG_SLOW":        {"BROLL_ACCESS_LOG_SLOW": "0s"},
	}
	for name, m := range cases {
		_, err := Load(env(m))
		if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line naming it", name, err)
		}
	}
	if _, err := Load(env(map[string]string{"BROLL_RATE_LIMIT_PER_MINUTE": "0"})); err == nil {
		t.Error("zero rate limit accepted")
	}
}

func TestSecretsAreMasked(t *testing.T) {
	signing, legacy := GenerateSecret(), GenerateSecret()
	c, err := Load(env(map[string]string{"BROLL_SIGNING_KEY": signing, "BROLL_LEGACY_SECRET": legacy}))
	if err != nil {
		t.Fatal(err)
	}
	printed := fmt.Sprintf("%+v %v %v", c, c, c.Summary())
	if strings.Contains(printed, signing) || strings.Contains(printed, legacy) {
		t.Fatalf("secret printed: %s", printed)
	}
	if c.SigningKey.Reveal() != signing {
		t.Fatal("reveal")
	}
}

// TestSecretsRefusedAtStart: a short secret, an example value from the
// docs, docker-compose.yml or deploy/k8s/secret.example.yaml, or a typed
// pattern is refused for each secret setting, with one line naming it; an
// empty legacy secret keeps v0 off and is fine.
func TestSecretsRefusedAtStart(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"short":                    "s3cr3t-but-only-twenty",
		"change-me":                "change-me",
		"changeme":                 "changeme",
		"secret":                   "secret",
		"legacy-secret":            "legacy-secret",
		"the k8s example":          "CHANGE-ME-to-48-random-bytes-in-base64-0123456789",
		"the k8s legacy example":   "CHANGE-ME",
		"change me, padded":        "please-Change_Me-before-going-to-production-1234",
		"a placeholder word":       "placeholder-placeholder-placeholder-xyz",
		"an example value":         "example-secret-for-the-readme-do-not-use-1",
		"a counting pattern":       "test-signing-key-0123456789abcdef0123",
		"one repeated character":   strings.Repeat("k", 40),
		"a short repeated pattern": strings.Repeat("abc1", 10),
		"31 random-looking chars":  GenerateSecret()[:31],
	}
	for _, name := range []string{"BROLL_SIGNING_KEY", "BROLL_SIGNING_KEY_PREVIOUS", "BROLL_LEGACY_SECRET"} {
		for what, v := range bad {
			_, err := Load(env(map[string]string{"BROLL_SIGNING_KEY": GenerateSecret(), name: v}))
			if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s = %s (%q): %v, want one line naming it", name, what, v, err)
			}
			if err != nil && strings.Contains(err.Error(), v) {
				t.Errorf("%s: the error repeats the secret: %v", name, err)
			}
		}
	}
	good := map[string]string{
		"generated":   GenerateSecret(),
		"hex":         "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"run.sh-like": "q2VxW8ZrT0b1mYpLk3NcJ7sHfDg4aE6u9oRiXtB5nCw",
	}
	for what, v := range good {
		if _, err := Load(env(map[string]string{"BROLL_SIGNING_KEY": v, "BROLL_LEGACY_SECRET": v})); err != nil {
			t.Errorf("%s secret refused: %v", what, err)
		}
	}
	if c, err := Load(env(nil)); err != nil || c.LegacySecret != "" {
		t.Errorf("no legacy secret: %v", err)
	}
}

func TestSummaryHidesPasswords(t *testing.T) {
	c, err := Load(env(map[string]string{"DATABASE_URL": "postgres://u:hunter2@h/db", "REDIS_URL": "redis://:pw-redis@h:6379/0"}))
	if err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprint(c.Summary())
	if strings.Contains(s, "hunter2") || strings.Contains(s, "pw-redis") {
		t.Fatalf("password in summary: %s", s)
	}
}

func TestTrustedProxies(t *testing.T) {
	c, err := Load(env(map[string]string{"BROLL_TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.7 ,fd00::/8,"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.TrustedProxies); got != "[10.0.0.0/8 192.168.1.7/32 fd00::/8]" {
		t.Fatalf("trusted proxies %s", got)
	}
}
