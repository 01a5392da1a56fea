// Package config reads the service's configuration from the environment into
// one typed struct with defaults and validation. Nothing here is global: each
// binary loads a Config and passes it down.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"broll/internal/money"
	"broll/internal/redisx"
)

// Config is the whole configuration of the API node, the worker and the CLI.
// Each setting is declared once, on its field: its variable (env), its
// default (default; none: the zero value) and what Validate holds it to
// beyond its type (see checkDeclared). Load, Defaults and Summary read these.
type Config struct {
	DatabaseURL string `env:"DATABASE_URL"`
	// DatabaseReadURL is a streaming replica of DatabaseURL for catalog
	// reads ("": none); see internal/replica.
	DatabaseReadURL    string `env:"BROLL_DATABASE_READ_URL"`
	RedisURL           string `env:"REDIS_URL"`
	HTTPAddr           string `env:"BROLL_HTTP_ADDR" default:":8080"`
	PublicURL          string `env:"BROLL_PUBLIC_URL"`
	RateLimitPerMinute int    `env:"BROLL_RATE_LIMIT_PER_MINUTE" default:"60" range:"1,1000000"`
	EmbedProvider      string `env:"BROLL_EMBED_PROVIDER" default:"auto" oneof:"auto,ollama,builtin"`
	OllamaHost         string `env:"OLLAMA_HOST" default:"http://127.0.0.1:11434"`
	EmbedModel         string `env:"BROLL_EMBED_MODEL" default:"nomic-embed-text"`

	// EmbedTimeout bounds each request to Ollama (the worker's batches,
	// a node's query embeddings, the check at start): a server slower
	// than this fails the call, which the worker retries with backoff and
	// a search answers with 503. The first request after Ollama unloaded
	// the model also loads it.
	EmbedTimeout time.Duration `env:"BROLL_EMBED_TIMEOUT" default:"60s" range:"100ms,10m"`

	SigningKey         Secret `env:"BROLL_SIGNING_KEY" check:"secret"`
	SigningKeyPrevious Secret `env:"BROLL_SIGNING_KEY_PREVIOUS" check:"secret"`
	MediaDir           string `env:"BROLL_MEDIA_DIR" default:"./media"`
	// MediaStore is where clip files live: "local" (MediaDir, served by
	// the API) or "s3" (an S3-compatible bucket; the API redirects to
	// presigned URLs and never streams the bytes).
	MediaStore string `env:"BROLL_MEDIA_STORE" default:"local" oneof:"local,s3"`
	S3         S3
	// UploadMaxBytes bounds one upload (5 GiB by default); UploadURLTTL is
	// how long an upload URL works.
	UploadMaxBytes int64         `env:"BROLL_UPLOAD_MAX_BYTES" default:"5368709120" range:"1,5497558138880 (5 TiB)"`
	UploadURLTTL   time.Duration `env:"BROLL_UPLOAD_URL_TTL" default:"1h" range:"1m,168h"`
	// BodyIdleTimeout bounds a streamed body (an upload's PUT, a download)
	// by the time between two of its bytes, not by its whole duration.
	BodyIdleTimeout time.Duration `env:"BROLL_BODY_IDLE_TIMEOUT" default:"30s" range:"1s,1h"`
	// ImportDir confines the files POST /api/ops/v1/videos may name.
	ImportDir      string        `env:"BROLL_IMPORT_DIR" default:"./import"`
	DownloadURLTTL time.Duration `env:"BROLL_DOWNLOAD_URL_TTL" default:"1h" range:"1m,168h"`
	// IdempotencyWait is how long a retry with an Idempotency-Key waits for
	// the first request with it before it gets 409 idempotency_key_in_use.
	IdempotencyWait time.Duration `env:"BROLL_IDEMPOTENCY_WAIT" default:"5s" range:"0s,1m"`
	LegacySecret    Secret        `env:"BROLL_LEGACY_SECRET" check:"secret"`
	LegacySunset    time.Time     `env:"BROLL_LEGACY_SUNSET" default:"2026-09-01"`
	LogLevel        string        `env:"BROLL_LOG_LEVEL" default:"info" oneof:"debug,info,warn,error"`
	// AccessLogSample is the share of requests the API writes an access
	// log line for (0 to 1); 5xx answers and requests slower than
	// AccessLogSlow are logged whatever it says.
	AccessLogSample float64       `env:"BROLL_ACCESS_LOG_SAMPLE" default:"1"`
	AccessLogSlow   time.Duration `env:"BROLL_ACCESS_LOG_SLOW" default:"1s" range:"1ms,1h"`
	ShutdownTimeout time.Duration `env:"BROLL_SHUTDOWN_TIMEOUT" default:"20s"`
	// MaxBodyBytes bounds a request body (1 MiB by default).
	MaxBodyBytes       int           `env:"BROLL_MAX_BODY_BYTES" default:"1048576"`
	UsageFlushInterval time.Duration `env:"BROLL_USAGE_FLUSH_INTERVAL" default:"10s"`
	// CollectionRetention is how long a revoked key's collections stay
	// readable by its root before the worker's sweep removes them: the
	// statement period (a month) and its grace days.
	CollectionRetention time.Duration `env:"BROLL_COLLECTION_RETENTION" default:"840h" range:"1s,8760h"`
	// CollectionSweepInterval is how often a worker runs that sweep.
	CollectionSweepInterval time.Duration `env:"BROLL_COLLECTION_SWEEP_INTERVAL" default:"1h" range:"1s,168h"`
	// WorkerConcurrency is how many tasks (each a batch of clips) a
	// worker runs at once; WorkerPreviewConcurrency how many preview tasks
	// (ffmpeg) beside them, apart.
	WorkerConcurrency        int `env:"BROLL_WORKER_CONCURRENCY" default:"4" range:"1,256"`
	WorkerPreviewConcurrency int `env:"BROLL_WORKER_PREVIEW_CONCURRENCY" default:"1" range:"1,64"`
	// WorkerBatchSize is how many clips go in one task, read where clips
	// are queued (API, brollctl, the worker's relay), and the most a worker
	// embeds in one embedder call.
	WorkerBatchSize int `env:"BROLL_WORKER_BATCH_SIZE" default:"100" range:"1,1000"`
	// WorkerHTTPAddr is where a worker serves /healthz and /metrics.
	WorkerHTTPAddr string `env:"BROLL_WORKER_HTTP_ADDR" default:":9090"`
	// MetricsAddr is the API node's own /metrics listener, kept off the
	// public port; MetricsOff turns it off.
	MetricsAddr string `env:"BROLL_METRICS_ADDR" default:":9091"`
	// A failed embedding is retried after EmbedRetryBaseDelay, doubling up
	// to EmbedRetryMaxDelay; after tasks.EmbedMaxRetry retries the job is
	// archived.
	EmbedRetryBaseDelay time.Duration `env:"BROLL_EMBED_RETRY_BASE_DELAY" default:"1s"`
	EmbedRetryMaxDelay  time.Duration `env:"BROLL_EMBED_RETRY_MAX_DELAY" default:"5m"`
	// SemanticEfSearch is the HNSW candidate list of a semantic search
	// (pgvector's hnsw.ef_search): higher finds more of the true nearest
	// clips, lower costs less (search.ServiceOptions.EfSearch).
	SemanticEfSearch int `env:"BROLL_SEMANTIC_EF_SEARCH" default:"120" range:"10,1000"`
	// SemanticRecallTarget is the mean recall@10 the worker's calibration
	// chooses the smallest candidate list for, on the catalog's own
	// vectors (search.Service.Calibrate); SemanticEfSearch bounds it. 0
	// turns calibration off: every search walks SemanticEfSearch.
	SemanticRecallTarget float64 `env:"BROLL_SEMANTIC_RECALL_TARGET" default:"0.96"`
	// SemanticCalibrateInterval is how often a worker calibrates.
	SemanticCalibrateInterval time.Duration `env:"BROLL_SEMANTIC_CALIBRATE_INTERVAL" default:"1h" range:"1m,168h"`
	// ListingsQuiet is how long the catalog must keep one version before
	// a node reads it whole to answer lists from memory; 0 turns that off
	// (search.ServiceOptions.ListingsQuiet).
	ListingsQuiet time.Duration `env:"BROLL_LISTINGS_QUIET" default:"1s" range:"0s,1h"`
	RedisPrefix   string        `env:"BROLL_REDIS_PREFIX" default:"broll:"`
	AuthCacheTTL  time.Duration `env:"BROLL_AUTH_CACHE_TTL" default:"30s" range:"0s,10m"`
	// MCPAllowedOrigins are the browser origins (scheme://host[:port], or
	// "*") allowed to call /api/mcp besides the service's own; requests
	// without an Origin header (CLIs, desktop apps, servers) are unaffected.
	MCPAllowedOrigins Origins `env:"BROLL_MCP_ALLOWED_ORIGINS"`
	// TrustedProxies are the load balancers (addresses or CIDR ranges) whose
	// X-Forwarded-For is believed: the client address is the right-most
	// entry that is not one of them. Empty: the connection's address.
	TrustedProxies []netip.Prefix `env:"BROLL_TRUSTED_PROXIES"`
	// SessionTTL ends a dashboard session unused for this long;
	// SessionMaxAge ends any session this long after sign-in.
	SessionTTL    time.Duration `env:"BROLL_SESSION_TTL" default:"8h" range:"1m,720h"`
	SessionMaxAge time.Duration `env:"BROLL_SESSION_MAX_AGE" default:"168h"`
	// SignInMaxFailures wrong passwords in a row lock an email out of the
	// dashboard's sign-in for SignInLockout.
	SignInMaxFailures int           `env:"BROLL_SIGNIN_MAX_FAILURES" default:"5" range:"1,100"`
	SignInLockout     time.Duration `env:"BROLL_SIGNIN_LOCKOUT" default:"15m" range:"1m,24h"`
	// PasswordLinkTTL is how long a one-time set-password link works.
	PasswordLinkTTL time.Duration `env:"BROLL_PASSWORD_LINK_TTL" default:"24h" range:"10m,168h"`
	// StatementTimeout bounds every SQL statement of the API and the
	// worker; CtlStatementTimeout those of brollctl (imports, migrations of
	// legacy data, reports run longer by design).
	StatementTimeout    time.Duration `env:"BROLL_STATEMENT_TIMEOUT" default:"5s" range:"10ms,1h"`
	CtlStatementTimeout time.Duration `env:"BROLL_CTL_STATEMENT_TIMEOUT" default:"10m" range:"1s,24h"`
	// Download links may be fetched this many times a minute per purchase
	// and per client address (an IPv6 client by its /64).
	DownloadsPerPurchasePerMinute int `env:"BROLL_DOWNLOADS_PER_PURCHASE_PER_MINUTE" default:"30" range:"1,100000"`
	DownloadsPerAddressPerMinute  int `env:"BROLL_DOWNLOADS_PER_ADDRESS_PER_MINUTE" default:"120" range:"1,100000"`
	// PasswordHashConcurrency bounds the argon2 hashes computed at once in
	// one process (each takes 19 MiB and a core for tens of milliseconds);
	// 0 means GOMAXPROCS.
	PasswordHashConcurrency int `env:"BROLL_PASSWORD_HASH_CONCURRENCY" range:"0 (GOMAXPROCS),256"`
	// SignInGlobalPerMinute is the dashboard sign-in attempts allowed per
	// minute across all nodes, whoever makes them.
	SignInGlobalPerMinute int `env:"BROLL_SIGNIN_GLOBAL_PER_MINUTE" default:"600" range:"1,1000000"`
	// WebhookAllowHosts are the host names, addresses and CIDR ranges that
	// webhooks may be sent to although they are not public (loopback,
	// private, link-local); http:// endpoints are accepted only for them.
	WebhookAllowHosts []string `env:"BROLL_WEBHOOK_ALLOW_HOSTS"`
	// WebhookRetryBase is the pause after a delivery's first failure,
	// doubled after each further one up to WebhookRetryMax, for up to
	// 3 days; WebhookPollInterval is how often a worker looks for due
	// deliveries.
	WebhookRetryBase    time.Duration `env:"BROLL_WEBHOOK_RETRY_BASE" default:"10s"`
	WebhookRetryMax     time.Duration `env:"BROLL_WEBHOOK_RETRY_MAX" default:"10h"`
	WebhookPollInterval time.Duration `env:"BROLL_WEBHOOK_POLL_INTERVAL" default:"1s"`
	// LowBalanceThreshold is the balance below which an account without a
	// threshold of its own gets the balance.low event. Amounts are written in
	// dollars, which money.ParseDollars never reads as negative.
	LowBalanceThreshold money.Cents `env:"BROLL_LOW_BALANCE_THRESHOLD" default:"10.00"`
	// TestBalance is what an account's test balance starts with and what
	// `brollctl credits reset-test` sets it back to.
	TestBalance money.Cents `env:"BROLL_TEST_BALANCE" default:"1000.00"`
	// WarmupTimeout bounds how long an API node keeps /readyz at 503 while
	// it warms its catalog at start and after a Postgres restart; past it
	// the node serves anyway. 0 turns the warm-up off.
	WarmupTimeout time.Duration `env:"BROLL_WARMUP_TIMEOUT" default:"60s" range:"0s,1h"`
	License       License
}

// License is what every purchase's licence (billing/license) is signed and
// printed with.
type License struct {
	// SigningKey is the secret the Ed25519 licence key is derived from ("":
	// derived from BROLL_SIGNING_KEY, and from BROLL_SIGNING_KEY_PREVIOUS
	// for the key published beside it). SigningKeysPrevious are earlier
	// ones, comma-separated, whose public keys stay in the JWKS so that
	// licences signed before a rotation keep verifying.
	SigningKey          Secret `env:"BROLL_LICENSE_SIGNING_KEY" check:"secret"`
	SigningKeysPrevious Secret `env:"BROLL_LICENSE_SIGNING_KEYS_PREVIOUS"`
	// LicensorName is the licensor printed on every licence.
	LicensorName string `env:"BROLL_LICENSOR_NAME" default:"B-roll Library"`
	// TermsVersion and TermsURL name the licence terms ("" URL: the
	// service's own page, BaseURL/licenses/terms).
	TermsVersion string `env:"BROLL_LICENSE_TERMS_VERSION" default:"2026-11"`
	TermsURL     string `env:"BROLL_LICENSE_TERMS_URL"`
	// LookupsPerAddressPerMinute bounds the public verify page per client
	// address (an IPv6 client by its /64).
	LookupsPerAddressPerMinute int `env:"BROLL_LICENSE_LOOKUPS_PER_ADDRESS_PER_MINUTE" default:"60" range:"1,100000"`
	// FontDir is the directory the certificate's TrueType fonts are read
	// from at start, laid out as Debian's font packages install them
	// (fonts-noto-core, fonts-nanum, fonts-droid-fallback).
	FontDir string `env:"BROLL_CERTIFICATE_FONT_DIR" default:"/usr/share/fonts/truetype"`
}

// Secrets returns the licence keys' secrets: the one that signs first,
// then those only published.
func (l License) Secrets(c Config) (current string, previous []string) {
	if l.SigningKey == "" {
		return c.SigningKey.Reveal(), []string{c.SigningKeyPrevious.Reveal()}
	}
	for _, p := range strings.Split(l.SigningKeysPrevious.Reveal(), ",") {
		if p = strings.TrimSpace(p); p != "" {
			previous = append(previous, p)
		}
	}
	return l.SigningKey.Reveal(), previous
}

// TermsLink is the terms' URL as printed on licences.
func (c Config) TermsLink() string {
	if c.License.TermsURL != "" {
		return c.License.TermsURL
	}
	return c.BaseURL() + "/licenses/terms"
}

// S3 is the bucket of the s3 media store.
type S3 struct {
	// Endpoint is the store's URL (http://minio:9000, https://s3.eu-west-1.amazonaws.com).
	Endpoint  string `env:"BROLL_S3_ENDPOINT"`
	Bucket    string `env:"BROLL_S3_BUCKET"`
	Region    string `env:"BROLL_S3_REGION" default:"us-east-1"`
	AccessKey Secret `env:"BROLL_S3_ACCESS_KEY"`
	SecretKey Secret `env:"BROLL_S3_SECRET_KEY"`
	// PathStyle addresses the bucket as endpoint/bucket rather than
	// bucket.endpoint; most self-hosted stores need it.
	PathStyle bool `env:"BROLL_S3_PATH_STYLE" default:"true"`
	// PresignTTL is how long a presigned GET handed to a client works.
	PresignTTL time.Duration `env:"BROLL_S3_PRESIGN_TTL" default:"1m"`
	// PublicEndpoint is the store's URL as clients reach it, for the
	// presigned URLs ("": Endpoint).
	PublicEndpoint string `env:"BROLL_S3_PUBLIC_ENDPOINT"`
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
	c, _ := parse(func(string) string { return "" }) // the declared defaults parse: every Load reads them
	return c
}

// Load reads the configuration through getenv (os.Getenv in production, a
// map in tests) and validates it. The error names the first bad variable in
// one line.
func Load(getenv func(string) string) (Config, error) {
	c, err := parse(getenv)
	if err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parse reads every declared setting; a blank or whitespace value means the
// default. A value that does not parse is reported as
// "NAME: "value" is not <what>".
func parse(getenv func(string) string) (Config, error) {
	var c Config
	var first error
	parsers := parsers()
	eachSetting(reflect.ValueOf(&c).Elem(), func(name string, f reflect.StructField, v reflect.Value) {
		raw := cmp.Or(strings.TrimSpace(getenv(name)), f.Tag.Get("default"))
		if raw == "" || first != nil {
			return
		}
		x, err := parsers[f.Type](raw) // a setting of a new type needs its entry in parsers
		if err != nil {
			first = fmt.Errorf("%s: %w", name, err)
			return
		}
		v.Set(reflect.ValueOf(x))
	})
	return c, first
}

// eachSetting calls fn with the variable, the field and the value of every
// declared setting of v, those of S3 included.
func eachSetting(v reflect.Value, fn func(name string, f reflect.StructField, value reflect.Value)) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if name := f.Tag.Get("env"); name != "" {
			fn(name, f, v.Field(i))
		} else if f.Type.Kind() == reflect.Struct {
			eachSetting(v.Field(i), fn)
		}
	}
}

// checkDeclared holds each setting to what its field declares and reports
// the first that fails: range:"lo,hi" (bounds written as values are, a note
// may follow each), oneof:"a,b,c", check:"secret" (checkSecret).
func (c Config) checkDeclared() error {
	var first error
	eachSetting(reflect.ValueOf(c), func(name string, f reflect.StructField, v reflect.Value) {
		if first != nil {
			return
		}
		if f.Tag.Get("check") == "secret" {
			first = checkSecret(name, v.Interface().(Secret))
		}
		if opts := strings.Split(f.Tag.Get("oneof"), ","); len(opts) > 1 && !slices.Contains(opts, v.String()) {
			last := len(opts) - 1
			first = fmt.Errorf("%s must be %s or %s, got %q", name, strings.Join(opts[:last], ", "), opts[last], v.String())
		}
		if lo, hi, ok := strings.Cut(f.Tag.Get("range"), ","); ok {
			parse := parsers()[f.Type]
			l, _ := parse(strings.Fields(lo)[0]) // the declared bounds parse: every Load checks them
			h, _ := parse(strings.Fields(hi)[0])
			if x := v.Int(); x < reflect.ValueOf(l).Int() || x > reflect.ValueOf(h).Int() {
				first = fmt.Errorf("%s must be between %s and %s, got %v", name, lo, hi, v.Interface())
			}
		}
	})
	return first
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
	if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != redisx.SentinelScheme) {
		return errors.New("REDIS_URL must be a redis://, rediss:// or redis-sentinel:// URL")
	}
	if _, err := redisx.Parse(c.RedisURL); err != nil {
		return err
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
	if !(c.SemanticRecallTarget >= 0 && c.SemanticRecallTarget <= 1) { // NaN fails too
		return fmt.Errorf("BROLL_SEMANTIC_RECALL_TARGET must be between 0 and 1, got %v", c.SemanticRecallTarget)
	}
	if !(c.AccessLogSample >= 0 && c.AccessLogSample <= 1) { // NaN fails too
		return fmt.Errorf("BROLL_ACCESS_LOG_SAMPLE must be between 0 and 1, got %v", c.AccessLogSample)
	}
	// An empty legacy secret keeps v0 off; an empty signing key is refused
	// by the processes that sign (RequireSigningKey).
	if err := c.checkDeclared(); err != nil {
		return err
	}
	if err := c.validateLicense(); err != nil {
		return err
	}
	if err := c.validateMedia(); err != nil {
		return err
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
	if c.MediaStore != "s3" {
		return nil
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

// isOrigin accepts scheme://host[:port] and nothing more: a path, query or
// credentials would never match what a browser sends.
func isOrigin(o string) bool {
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && !strings.HasSuffix(o, "?")
}

func (c Config) validateLicense() error {
	for _, p := range strings.Split(c.License.SigningKeysPrevious.Reveal(), ",") {
		if p = strings.TrimSpace(p); p != "" {
			if err := checkSecret("BROLL_LICENSE_SIGNING_KEYS_PREVIOUS", Secret(p)); err != nil {
				return err
			}
		}
	}
	if c.License.SigningKeysPrevious != "" && c.License.SigningKey == "" {
		return errors.New("BROLL_LICENSE_SIGNING_KEYS_PREVIOUS needs BROLL_LICENSE_SIGNING_KEY")
	}
	if n := len(c.License.LicensorName); n < 1 || n > 200 {
		return fmt.Errorf("BROLL_LICENSOR_NAME must be 1 to 200 characters, got %d", n)
	}
	if n := len(c.License.TermsVersion); n < 1 || n > 64 {
		return fmt.Errorf("BROLL_LICENSE_TERMS_VERSION must be 1 to 64 characters, got %d", n)
	}
	if c.License.TermsURL != "" {
		if u, err := url.Parse(c.License.TermsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("BROLL_LICENSE_TERMS_URL must be an http(s) URL, got %q", c.License.TermsURL)
		}
	}
	return nil
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

// Summary is the configuration as it may be logged: every setting, keyed by
// its variable in lower case without BROLL_, secrets masked and passwords
// removed from URLs.
func (c Config) Summary() map[string]any {
	out := map[string]any{}
	eachSetting(reflect.ValueOf(c), func(name string, _ reflect.StructField, f reflect.Value) {
		key := strings.ToLower(strings.TrimPrefix(name, "BROLL_"))
		switch v := f.Interface().(type) {
		case time.Time:
			out[key] = v.Format(time.DateOnly)
		case fmt.Stringer: // Secret masks itself; durations and amounts read better as text
			out[key] = v.String()
		case string:
			out[key] = redactURL(v)
		default:
			out[key] = v
		}
	})
	return out
}

// redactURL hides the password of a URL; other values are left as they are.
func redactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}
