// Package config reads the service's configuration from the environment into
// one typed struct with defaults and validation. Nothing here is global: each
// binary loads a Config and passes it down.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"broll/internal/money"
)

// Config is the whole configuration of the API node, the worker and the CLI.
type Config struct {
	DatabaseURL string
	// DatabaseReadURL is a streaming replica of DatabaseURL for catalog
	// reads ("": none); see internal/replica.
	DatabaseReadURL    string
	RedisURL           string
	HTTPAddr           string
	PublicURL          string
	RateLimitPerMinute int
	EmbedProvider      string
	OllamaHost         string
	EmbedModel         string
	SigningKey         Secret
	SigningKeyPrevious Secret
	MediaDir           string
	// MediaStore is where clip files live: "local" (MediaDir, served by
	// the API) or "s3" (an S3-compatible bucket; the API redirects to
	// presigned URLs and never streams the bytes).
	MediaStore string
	S3         S3
	// UploadMaxBytes bounds one upload; UploadURLTTL is how long an upload
	// URL works.
	UploadMaxBytes int64
	UploadURLTTL   time.Duration
	// ImportDir confines the files POST /api/ops/v1/videos may name.
	ImportDir      string
	DownloadURLTTL time.Duration
	// IdempotencyWait is how long a retry with an Idempotency-Key waits for
	// the first request with it before it gets 409 idempotency_key_in_use.
	IdempotencyWait    time.Duration
	LegacySecret       Secret
	LegacySunset       time.Time
	LogLevel           string
	ShutdownTimeout    time.Duration
	MaxBodyBytes       int
	UsageFlushInterval time.Duration
	WorkerConcurrency  int
	// WorkerHTTPAddr is where a worker serves /healthz and /metrics.
	WorkerHTTPAddr string
	// MetricsAddr is the API node's own /metrics listener, kept off the
	// public port; MetricsOff turns it off.
	MetricsAddr string
	// A failed embedding is retried after EmbedRetryBaseDelay, doubling up
	// to EmbedRetryMaxDelay; after tasks.EmbedMaxRetry retries the job is
	// archived.
	EmbedRetryBaseDelay time.Duration
	EmbedRetryMaxDelay  time.Duration
	// SemanticEfSearch is the HNSW candidate list of a semantic search
	// (pgvector's hnsw.ef_search): higher finds more of the true nearest
	// clips, lower costs less (catalog.Service.WithEfSearch).
	SemanticEfSearch int
	RedisPrefix      string
	AuthCacheTTL     time.Duration
	// MCPAllowedOrigins are the browser origins (scheme://host[:port], or
	// "*") allowed to call /api/mcp besides the service's own; requests
	// without an Origin header (CLIs, desktop apps, servers) are unaffected.
	MCPAllowedOrigins []string
	// TrustedProxies are the load balancers (addresses or CIDR ranges) whose
	// X-Forwarded-For is believed: the client address is the right-most
	// entry that is not one of them. Empty: the connection's address.
	TrustedProxies []netip.Prefix
	// SessionTTL ends a dashboard session unused for this long;
	// SessionMaxAge ends any session this long after sign-in.
	SessionTTL    time.Duration
	SessionMaxAge time.Duration
	// SignInMaxFailures wrong passwords in a row lock an email out of the
	// dashboard's sign-in for SignInLockout.
	SignInMaxFailures int
	SignInLockout     time.Duration
	// PasswordLinkTTL is how long a one-time set-password link works.
	PasswordLinkTTL time.Duration
	// StatementTimeout bounds every SQL statement of the API and the
	// worker; CtlStatementTimeout those of brollctl (imports, migrations of
	// legacy data, reports run longer by design).
	StatementTimeout    time.Duration
	CtlStatementTimeout time.Duration
	// Download links may be fetched this many times a minute per purchase
	// and per client address (an IPv6 client by its /64).
	DownloadsPerPurchasePerMinute int
	DownloadsPerAddressPerMinute  int
	// PasswordHashConcurrency bounds the argon2 hashes computed at once in
	// one process (each takes 19 MiB and a core for tens of milliseconds);
	// 0 means GOMAXPROCS.
	PasswordHashConcurrency int
	// SignInGlobalPerMinute is the dashboard sign-in attempts allowed per
	// minute across all nodes, whoever makes them.
	SignInGlobalPerMinute int
	// WebhookAllowHosts are the host names, addresses and CIDR ranges that
	// webhooks may be sent to although they are not public (loopback,
	// private, link-local); http:// endpoints are accepted only for them.
	WebhookAllowHosts []string
	// WebhookRetryBase is the pause after a delivery's first failure,
	// doubled after each further one up to WebhookRetryMax, for up to
	// 3 days; WebhookPollInterval is how often a worker looks for due
	// deliveries.
	WebhookRetryBase    time.Duration
	WebhookRetryMax     time.Duration
	WebhookPollInterval time.Duration
	// LowBalanceThreshold (cents) is the balance below which an account
	// without a threshold of its own gets the balance.low event.
	LowBalanceThreshold int64
	// TestBalance (cents) is what an account's test balance starts with
	// and what `brollctl credits reset-test` sets it back to.
	TestBalance int64
}

// S3 is the bucket of the s3 media store.
type S3 struct {
	// Endpoint is the store's URL (http://minio:9000, https://s3.eu-west-1.amazonaws.com).
	Endpoint  string
	Bucket    string
	Region    string
	AccessKey Secret
	SecretKey Secret
	// PathStyle addresses the bucket as endpoint/bucket rather than
	// bucket.endpoint; most self-hosted stores need it.
	PathStyle bool
	// PresignTTL is how long a presigned GET handed to a client works.
	PresignTTL time.Duration
	// PublicEndpoint is the store's URL as clients reach it, for the
	// presigned URLs ("": Endpoint).
	PublicEndpoint string
}

// Secret is a string that never prints its value.
type Secret string

// String masks the value so that a printed Config never leaks it.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "********"
}

// Reveal returns the secret value for the code that needs it.
func (s Secret) Reveal() string { return string(s) }

// MetricsOff as BROLL_METRICS_ADDR serves no /metrics at all (an empty
// value means the default, as for every setting).
const MetricsOff = "off"

// Defaults returns the configuration used where the environment is silent.
func Defaults() Config {
	return Config{
		HTTPAddr:            ":8080",
		RateLimitPerMinute:  60,
		EmbedProvider:       "auto",
		OllamaHost:          "http://127.0.0.1:11434",
		EmbedModel:          "nomic-embed-text",
		MediaDir:            "./media",
		MediaStore:          "local",
		S3:                  S3{Region: "us-east-1", PathStyle: true, PresignTTL: time.Minute},
		UploadMaxBytes:      5 << 30,
		UploadURLTTL:        time.Hour,
		ImportDir:           "./import",
		DownloadURLTTL:      time.Hour,
		IdempotencyWait:     5 * time.Second,
		LegacySunset:        time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
		LogLevel:            "info",
		ShutdownTimeout:     20 * time.Second,
		MaxBodyBytes:        1 << 20,
		UsageFlushInterval:  10 * time.Second,
		WorkerConcurrency:   4,
		WorkerHTTPAddr:      ":9090",
		MetricsAddr:         ":9091",
		EmbedRetryBaseDelay: time.Second,
		EmbedRetryMaxDelay:  5 * time.Minute,
		SemanticEfSearch:    120,
		RedisPrefix:         "broll:",
		AuthCacheTTL:        30 * time.Second,
		SessionTTL:          8 * time.Hour,
		SessionMaxAge:       7 * 24 * time.Hour,
		SignInMaxFailures:   5,
		SignInLockout:       15 * time.Minute,
		PasswordLinkTTL:     24 * time.Hour,
		StatementTimeout:    5 * time.Second,
		CtlStatementTimeout: 10 * time.Minute,

		DownloadsPerPurchasePerMinute: 30,
		DownloadsPerAddressPerMinute:  120,
		SignInGlobalPerMinute:         600,

		WebhookRetryBase:    10 * time.Second,
		WebhookRetryMax:     10 * time.Hour,
		WebhookPollInterval: time.Second,
		LowBalanceThreshold: 1000,
		TestBalance:         100000,
	}
}

// Load reads the configuration through getenv (os.Getenv in production, a
// map in tests) and validates it. The error names the first bad variable in
// one line.
func Load(getenv func(string) string) (Config, error) {
	c := Defaults()
	var errs []error
	str := func(name string, dst *string) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = v
		}
	}
	secret := func(name string, dst *Secret) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = Secret(v)
		}
	}
	integer := func(name string, dst *int) { parseVar(getenv, &errs, name, "a whole number", strconv.Atoi, dst) }
	duration := func(name string, dst *time.Duration) {
		parseVar(getenv, &errs, name, "a duration (examples: 30s, 1h)", time.ParseDuration, dst)
	}
	dollars := func(name string, dst *int64, example string) {
		parseVar(getenv, &errs, name, "an amount in dollars (example: "+example+")", func(v string) (int64, error) {
			d, err := money.ParseDollars(v)
			return int64(d), err
		}, dst)
	}

	str("DATABASE_URL", &c.DatabaseURL)
	str("BROLL_DATABASE_READ_URL", &c.DatabaseReadURL)
	str("REDIS_URL", &c.RedisURL)
	str("BROLL_HTTP_ADDR", &c.HTTPAddr)
	str("BROLL_PUBLIC_URL", &c.PublicURL)
	integer("BROLL_RATE_LIMIT_PER_MINUTE", &c.RateLimitPerMinute)
	str("BROLL_EMBED_PROVIDER", &c.EmbedProvider)
	str("OLLAMA_HOST", &c.OllamaHost)
	str("BROLL_EMBED_MODEL", &c.EmbedModel)
	secret("BROLL_SIGNING_KEY", &c.SigningKey)
	secret("BROLL_SIGNING_KEY_PREVIOUS", &c.SigningKeyPrevious)
	str("BROLL_MEDIA_DIR", &c.MediaDir)
	str("BROLL_IMPORT_DIR", &c.ImportDir)
	str("BROLL_MEDIA_STORE", &c.MediaStore)
	str("BROLL_S3_ENDPOINT", &c.S3.Endpoint)
	str("BROLL_S3_BUCKET", &c.S3.Bucket)
	str("BROLL_S3_PUBLIC_ENDPOINT", &c.S3.PublicEndpoint)
	str("BROLL_S3_REGION", &c.S3.Region)
	secret("BROLL_S3_ACCESS_KEY", &c.S3.AccessKey)
	secret("BROLL_S3_SECRET_KEY", &c.S3.SecretKey)
	parseVar(getenv, &errs, "BROLL_S3_PATH_STYLE", "true or false", strconv.ParseBool, &c.S3.PathStyle)
	duration("BROLL_S3_PRESIGN_TTL", &c.S3.PresignTTL)
	parseVar(getenv, &errs, "BROLL_UPLOAD_MAX_BYTES", "a whole number",
		func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }, &c.UploadMaxBytes)
	duration("BROLL_UPLOAD_URL_TTL", &c.UploadURLTTL)
	duration("BROLL_DOWNLOAD_URL_TTL", &c.DownloadURLTTL)
	duration("BROLL_IDEMPOTENCY_WAIT", &c.IdempotencyWait)
	secret("BROLL_LEGACY_SECRET", &c.LegacySecret)
	parseVar(getenv, &errs, "BROLL_LEGACY_SUNSET", "a date (YYYY-MM-DD)",
		func(v string) (time.Time, error) { return time.Parse("2006-01-02", v) }, &c.LegacySunset)
	str("BROLL_LOG_LEVEL", &c.LogLevel)
	duration("BROLL_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout)
	integer("BROLL_MAX_BODY_BYTES", &c.MaxBodyBytes)
	duration("BROLL_USAGE_FLUSH_INTERVAL", &c.UsageFlushInterval)
	integer("BROLL_WORKER_CONCURRENCY", &c.WorkerConcurrency)
	str("BROLL_WORKER_HTTP_ADDR", &c.WorkerHTTPAddr)
	str("BROLL_METRICS_ADDR", &c.MetricsAddr)
	duration("BROLL_EMBED_RETRY_BASE_DELAY", &c.EmbedRetryBaseDelay)
	duration("BROLL_EMBED_RETRY_MAX_DELAY", &c.EmbedRetryMaxDelay)
	integer("BROLL_SEMANTIC_EF_SEARCH", &c.SemanticEfSearch)
	str("BROLL_REDIS_PREFIX", &c.RedisPrefix)
	duration("BROLL_AUTH_CACHE_TTL", &c.AuthCacheTTL)
	if v := strings.TrimSpace(getenv("BROLL_MCP_ALLOWED_ORIGINS")); v != "" {
		c.MCPAllowedOrigins = splitOrigins(v)
	}
	if v := strings.TrimSpace(getenv("BROLL_TRUSTED_PROXIES")); v != "" {
		ps, err := parsePrefixes(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("BROLL_TRUSTED_PROXIES: %w", err))
		}
		c.TrustedProxies = ps
	}
	duration("BROLL_SESSION_TTL", &c.SessionTTL)
	duration("BROLL_SESSION_MAX_AGE", &c.SessionMaxAge)
	integer("BROLL_SIGNIN_MAX_FAILURES", &c.SignInMaxFailures)
	duration("BROLL_SIGNIN_LOCKOUT", &c.SignInLockout)
	duration("BROLL_PASSWORD_LINK_TTL", &c.PasswordLinkTTL)
	duration("BROLL_STATEMENT_TIMEOUT", &c.StatementTimeout)
	duration("BROLL_CTL_STATEMENT_TIMEOUT", &c.CtlStatementTimeout)
	integer("BROLL_DOWNLOADS_PER_PURCHASE_PER_MINUTE", &c.DownloadsPerPurchasePerMinute)
	integer("BROLL_DOWNLOADS_PER_ADDRESS_PER_MINUTE", &c.DownloadsPerAddressPerMinute)
	integer("BROLL_PASSWORD_HASH_CONCURRENCY", &c.PasswordHashConcurrency)
	integer("BROLL_SIGNIN_GLOBAL_PER_MINUTE", &c.SignInGlobalPerMinute)
	if v := strings.TrimSpace(getenv("BROLL_WEBHOOK_ALLOW_HOSTS")); v != "" {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.WebhookAllowHosts = append(c.WebhookAllowHosts, h)
			}
		}
	}
	duration("BROLL_WEBHOOK_RETRY_BASE", &c.WebhookRetryBase)
	duration("BROLL_WEBHOOK_RETRY_MAX", &c.WebhookRetryMax)
	duration("BROLL_WEBHOOK_POLL_INTERVAL", &c.WebhookPollInterval)
	dollars("BROLL_LOW_BALANCE_THRESHOLD", &c.LowBalanceThreshold, "10.00")
	dollars("BROLL_TEST_BALANCE", &c.TestBalance, "1000.00")

	if len(errs) > 0 {
		return Config{}, errs[0]
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parseVar sets dst from the variable name when it is set; a value parse
// refuses is reported as "NAME: "value" is not <what>", and dst is left as
// it was.
func parseVar[T any](getenv func(string) string, errs *[]error, name, what string, parse func(string) (T, error), dst *T) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return
	}
	x, err := parse(v)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("%s: %q is not %s", name, v, what))
		return
	}
	*dst = x
}

// Validate checks values that parsed but make no sense.
func (c Config) Validate() error {
	if c.DatabaseURL == "" {
		return errors.New("DATABASE_URL is required (example: postgres://user@127.0.0.1:5432/broll)")
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return errors.New("DATABASE_URL must be a postgres:// URL")
	}
	if c.DatabaseReadURL != "" {
		if u, err := url.Parse(c.DatabaseReadURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return errors.New("BROLL_DATABASE_READ_URL must be a postgres:// URL (or unset)")
		}
	}
	if c.RedisURL == "" {
		return errors.New("REDIS_URL is required (example: redis://127.0.0.1:6379/0)")
	}
	if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return errors.New("REDIS_URL must be a redis:// or rediss:// URL")
	}
	switch c.EmbedProvider {
	case "auto", "ollama", "builtin":
	default:
		return fmt.Errorf("BROLL_EMBED_PROVIDER must be auto, ollama or builtin, got %q", c.EmbedProvider)
	}
	if u, err := url.Parse(c.OllamaHost); err != nil || u.Host == "" {
		return fmt.Errorf("OLLAMA_HOST must be a URL such as http://127.0.0.1:11434, got %q", c.OllamaHost)
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("BROLL_PUBLIC_URL must be an http(s) URL, got %q", c.PublicURL)
		}
	}
	for _, h := range c.WebhookAllowHosts {
		if _, err := netip.ParsePrefix(h); strings.Contains(h, "/") && err != nil {
			return fmt.Errorf("BROLL_WEBHOOK_ALLOW_HOSTS: %q is not a CIDR range", h)
		}
	}
	if c.WebhookRetryBase <= 0 || c.WebhookRetryMax < c.WebhookRetryBase {
		return fmt.Errorf("BROLL_WEBHOOK_RETRY_BASE must be positive and at most BROLL_WEBHOOK_RETRY_MAX, got %s and %s",
			c.WebhookRetryBase, c.WebhookRetryMax)
	}
	if c.WebhookPollInterval <= 0 {
		return fmt.Errorf("BROLL_WEBHOOK_POLL_INTERVAL must be positive, got %s", c.WebhookPollInterval)
	}
	if c.LowBalanceThreshold < 0 {
		return errors.New("BROLL_LOW_BALANCE_THRESHOLD cannot be negative")
	}
	if c.TestBalance < 0 {
		return errors.New("BROLL_TEST_BALANCE cannot be negative")
	}
	// An empty legacy secret keeps v0 off; an empty signing key is refused
	// by the processes that sign (RequireSigningKey).
	for _, s := range []struct {
		name  string
		value Secret
	}{{"BROLL_SIGNING_KEY", c.SigningKey}, {"BROLL_SIGNING_KEY_PREVIOUS", c.SigningKeyPrevious}, {"BROLL_LEGACY_SECRET", c.LegacySecret}} {
		if err := checkSecret(s.name, s.value); err != nil {
			return err
		}
	}
	// Settings that only have to lie between two bounds.
	for _, r := range []struct {
		name      string
		v, lo, hi int
	}{
		{"BROLL_RATE_LIMIT_PER_MINUTE", c.RateLimitPerMinute, 1, 1_000_000},
		{"BROLL_SEMANTIC_EF_SEARCH", c.SemanticEfSearch, 10, 1000},
		{"BROLL_WORKER_CONCURRENCY", c.WorkerConcurrency, 1, 256},
		{"BROLL_SIGNIN_MAX_FAILURES", c.SignInMaxFailures, 1, 100},
		{"BROLL_DOWNLOADS_PER_PURCHASE_PER_MINUTE", c.DownloadsPerPurchasePerMinute, 1, 100_000},
		{"BROLL_DOWNLOADS_PER_ADDRESS_PER_MINUTE", c.DownloadsPerAddressPerMinute, 1, 100_000},
		{"BROLL_SIGNIN_GLOBAL_PER_MINUTE", c.SignInGlobalPerMinute, 1, 1_000_000},
	} {
		if r.v < r.lo || r.v > r.hi {
			return fmt.Errorf("%s must be between %d and %d, got %d", r.name, r.lo, r.hi, r.v)
		}
	}
	for _, r := range []struct {
		name      string
		v, lo, hi time.Duration
		bounds    string
	}{
		{"BROLL_IDEMPOTENCY_WAIT", c.IdempotencyWait, 0, time.Minute, "0s and 1m"},
		{"BROLL_DOWNLOAD_URL_TTL", c.DownloadURLTTL, time.Minute, 7 * 24 * time.Hour, "1m and 168h"},
		{"BROLL_AUTH_CACHE_TTL", c.AuthCacheTTL, 0, 10 * time.Minute, "0s and 10m"},
		{"BROLL_SESSION_TTL", c.SessionTTL, time.Minute, 30 * 24 * time.Hour, "1m and 720h"},
		{"BROLL_SIGNIN_LOCKOUT", c.SignInLockout, time.Minute, 24 * time.Hour, "1m and 24h"},
		{"BROLL_PASSWORD_LINK_TTL", c.PasswordLinkTTL, 10 * time.Minute, 7 * 24 * time.Hour, "10m and 168h"},
		{"BROLL_STATEMENT_TIMEOUT", c.StatementTimeout, 10 * time.Millisecond, time.Hour, "10ms and 1h"},
		{"BROLL_CTL_STATEMENT_TIMEOUT", c.CtlStatementTimeout, time.Second, 24 * time.Hour, "1s and 24h"},
		{"BROLL_UPLOAD_URL_TTL", c.UploadURLTTL, time.Minute, 7 * 24 * time.Hour, "1m and 168h"},
	} {
		if r.v < r.lo || r.v > r.hi {
			return fmt.Errorf("%s must be between %s, got %s", r.name, r.bounds, r.v)
		}
	}
	if err := c.validateMedia(); err != nil {
		return err
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("BROLL_LOG_LEVEL must be debug, info, warn or error, got %q", c.LogLevel)
	}
	if c.ShutdownTimeout <= 0 {
		return errors.New("BROLL_SHUTDOWN_TIMEOUT must be positive")
	}
	if c.MetricsAddr != MetricsOff {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("BROLL_METRICS_ADDR must be host:port (such as :9091) or %q, got %q", MetricsOff, c.MetricsAddr)
		}
	}
	if c.MaxBodyBytes < 1024 {
		return fmt.Errorf("BROLL_MAX_BODY_BYTES must be at least 1024, got %d", c.MaxBodyBytes)
	}
	if c.UsageFlushInterval < time.Second {
		return errors.New("BROLL_USAGE_FLUSH_INTERVAL must be at least 1s")
	}
	if c.EmbedRetryBaseDelay < 10*time.Millisecond || c.EmbedRetryMaxDelay < c.EmbedRetryBaseDelay {
		return fmt.Errorf("BROLL_EMBED_RETRY_BASE_DELAY must be at least 10ms and BROLL_EMBED_RETRY_MAX_DELAY at least as long, got %s and %s",
			c.EmbedRetryBaseDelay, c.EmbedRetryMaxDelay)
	}
	if c.SessionMaxAge < c.SessionTTL || c.SessionMaxAge > 90*24*time.Hour {
		return fmt.Errorf("BROLL_SESSION_MAX_AGE must be at least BROLL_SESSION_TTL (%s) and at most 2160h, got %s", c.SessionTTL, c.SessionMaxAge)
	}
	if c.PasswordHashConcurrency < 0 || c.PasswordHashConcurrency > 256 {
		return fmt.Errorf("BROLL_PASSWORD_HASH_CONCURRENCY must be between 0 (GOMAXPROCS) and 256, got %d", c.PasswordHashConcurrency)
	}
	for _, o := range c.MCPAllowedOrigins {
		if o != "*" && !isOrigin(o) {
			return fmt.Errorf("BROLL_MCP_ALLOWED_ORIGINS: %q is not an origin such as https://app.example.com or http://localhost:3000 (or *)", o)
		}
	}
	return nil
}

// validateMedia checks the media store settings; the s3 ones only matter,
// and are only required, when the store is s3.
func (c Config) validateMedia() error {
	if c.UploadMaxBytes < 1 || c.UploadMaxBytes > 5<<40 {
		return fmt.Errorf("BROLL_UPLOAD_MAX_BYTES must be between 1 and 5497558138880 (5 TiB), got %d", c.UploadMaxBytes)
	}
	switch c.MediaStore {
	case "local":
		return nil
	case "s3":
	default:
		return fmt.Errorf("BROLL_MEDIA_STORE must be local or s3, got %q", c.MediaStore)
	}
	if u, err := url.Parse(c.S3.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("BROLL_S3_ENDPOINT must be an http(s) URL without a path (such as http://minio:9000), got %q", c.S3.Endpoint)
	}
	if e := c.S3.PublicEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("BROLL_S3_PUBLIC_ENDPOINT must be an http(s) URL without a path, got %q", e)
		}
	}
	if n := len(c.S3.Bucket); n < 3 || n > 63 {
		return fmt.Errorf("BROLL_S3_BUCKET must be a bucket name of 3 to 63 characters, got %q", c.S3.Bucket)
	}
	if c.S3.Region == "" {
		return errors.New("BROLL_S3_REGION must not be empty")
	}
	if c.S3.AccessKey == "" || c.S3.SecretKey == "" {
		return errors.New("BROLL_S3_ACCESS_KEY and BROLL_S3_SECRET_KEY are required with BROLL_MEDIA_STORE=s3")
	}
	if c.S3.PresignTTL < time.Second || c.S3.PresignTTL > time.Hour {
		return fmt.Errorf("BROLL_S3_PRESIGN_TTL must be between 1s and 1h, got %s", c.S3.PresignTTL)
	}
	return nil
}

// parsePrefixes reads comma-separated addresses (a single host) and CIDR
// ranges.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR range", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// splitOrigins reads a comma-separated list in the form browsers send in the
// Origin header: lower-case scheme and host, no trailing slash.
func splitOrigins(v string) []string {
	var out []string
	for _, o := range strings.Split(v, ",") {
		if o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/")); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// isOrigin accepts scheme://host[:port] and nothing more: a path, query or
// credentials would never match what a browser sends.
func isOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && !strings.HasSuffix(o, "?")
}

// RequireSigningKey is checked by the processes that sign download links.
func (c Config) RequireSigningKey() error {
	if c.SigningKey == "" {
		return errors.New("BROLL_SIGNING_KEY is required (at least 32 random characters)")
	}
	return nil
}

// SecureCookies reports whether the service is reached over HTTPS, so that
// the dashboard's cookies are marked Secure.
func (c Config) SecureCookies() bool {
	return strings.HasPrefix(strings.ToLower(c.PublicURL), "https://")
}

// BaseURL is the public address links are built from.
func (c Config) BaseURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	host := c.HTTPAddr
	if strings.HasPrefix(host, ":") {
		host = "localhost" + host
	}
	return "http://" + host
}

// Summary is the configuration as it may be logged: secrets masked and
// passwords removed from URLs.
func (c Config) Summary() map[string]any {
	return map[string]any{
		"database_url":          redactURL(c.DatabaseURL),
		"database_read_url":     redactURL(c.DatabaseReadURL),
		"redis_url":             redactURL(c.RedisURL),
		"http_addr":             c.HTTPAddr,
		"worker_http_addr":      c.WorkerHTTPAddr,
		"metrics_addr":          c.MetricsAddr,
		"public_url":            c.BaseURL(),
		"rate_limit_per_minute": c.RateLimitPerMinute,
		"embed_provider":        c.EmbedProvider,
		"ollama_host":           redactURL(c.OllamaHost),
		"embed_model":           c.EmbedModel,
		"semantic_ef_search":    c.SemanticEfSearch,
		"signing_key":           c.SigningKey.String(),
		"media_dir":             c.MediaDir,
		"import_dir":            c.ImportDir,
		"media_store":           c.MediaStore,
		"s3_endpoint":           c.S3.Endpoint,
		"s3_public_endpoint":    c.S3.PublicEndpoint,
		"s3_bucket":             c.S3.Bucket,
		"s3_region":             c.S3.Region,
		"s3_access_key":         c.S3.AccessKey.String(),
		"s3_secret_key":         c.S3.SecretKey.String(),
		"s3_path_style":         c.S3.PathStyle,
		"s3_presign_ttl":        c.S3.PresignTTL.String(),
		"upload_max_bytes":      c.UploadMaxBytes,
		"upload_url_ttl":        c.UploadURLTTL.String(),
		"download_url_ttl":      c.DownloadURLTTL.String(),
		"idempotency_wait":      c.IdempotencyWait.String(),
		"legacy_secret":         c.LegacySecret.String(),
		"legacy_sunset":         c.LegacySunset.Format("2006-01-02"),
		"redis_prefix":          c.RedisPrefix,
		"mcp_allowed_origins":   c.MCPAllowedOrigins,
		"trusted_proxies":       c.TrustedProxies,
		"session_ttl":           c.SessionTTL.String(),
		"session_max_age":       c.SessionMaxAge.String(),
		"signin_max_failures":   c.SignInMaxFailures,
		"signin_lockout":        c.SignInLockout.String(),
		"password_link_ttl":     c.PasswordLinkTTL.String(),

		"statement_timeout":                 c.StatementTimeout.String(),
		"ctl_statement_timeout":             c.CtlStatementTimeout.String(),
		"downloads_per_purchase_per_minute": c.DownloadsPerPurchasePerMinute,
		"downloads_per_address_per_minute":  c.DownloadsPerAddressPerMinute,
		"password_hash_concurrency":         c.PasswordHashConcurrency,
		"signin_global_per_minute":          c.SignInGlobalPerMinute,
		"webhook_allow_hosts":               c.WebhookAllowHosts,
		"webhook_retry_base":                c.WebhookRetryBase.String(),
		"webhook_retry_max":                 c.WebhookRetryMax.String(),
		"webhook_poll_interval":             c.WebhookPollInterval.String(),
		"low_balance_threshold_cents":       c.LowBalanceThreshold,
		"test_balance_cents":                c.TestBalance,
	}
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
