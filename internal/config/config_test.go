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
	c, err := Load(env(map[string]string{"BROLL_SIGNING_KEY": strings.Repeat("s", 40), "BROLL_LEGACY_SECRET": "legacy-secret-value"}))
	if err != nil {
		t.Fatal(err)
	}
	printed := fmt.Sprintf("%+v %v", c, c)
	if strings.Contains(printed, "ssssssss") || strings.Contains(printed, "legacy-secret-value") {
		t.Fatalf("secret printed: %s", printed)
	}
	if c.SigningKey.Reveal() != strings.Repeat("s", 40) {
		t.Fatal("reveal")
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
