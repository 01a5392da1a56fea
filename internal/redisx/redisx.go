// Package redisx opens the service's Redis client from REDIS_URL: one
// server (redis://, rediss://) or a primary that Redis Sentinel watches
// (redis-sentinel://). A Redis Cluster is refused at start.
package redisx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelScheme is the URL scheme of a Sentinel-watched primary:
// redis-sentinel://[[user]:password@]host:port[,host:port...][/db]?master=NAME,
// the form asynq's ParseRedisURI reads.
const SentinelScheme = "redis-sentinel"

// Target is what REDIS_URL names: a single server or a Sentinel-watched
// primary. Either way NewClient returns a *redis.Client, so the code that
// uses it does not care which.
type Target struct {
	single   *redis.Options
	failover *redis.FailoverOptions
}

// Parse reads a REDIS_URL.
func Parse(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's error repeats the URL, password included.
		return Target{}, errors.New("REDIS_URL: not a URL")
	}
	if u.Scheme == SentinelScheme {
		fo, err := parseSentinel(u)
		if err != nil {
			return Target{}, fmt.Errorf("REDIS_URL: %w", err)
		}
		return Target{failover: fo}, nil
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return Target{}, fmt.Errorf("REDIS_URL: %w", err)
	}
	return Target{single: opts}, nil
}

// parseSentinel reads redis-sentinel://[[user]:password@]h:p[,h:p...][/db]?master=NAME.
// The password (and user) is the primary's and the sentinels' alike, as
// Sentinel deployments usually set one requirepass on both.
func parseSentinel(u *url.URL) (*redis.FailoverOptions, error) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, errors.New("the query of a redis-sentinel:// URL is malformed")
	}
	fo := &redis.FailoverOptions{MasterName: q.Get("master")}
	if fo.MasterName == "" {
		return nil, errors.New("a redis-sentinel:// URL needs ?master=NAME, the name the sentinels monitor")
	}
	for k := range q {
		if k != "master" {
			return nil, fmt.Errorf("unknown parameter %q in a redis-sentinel:// URL (only master)", k)
		}
	}
	for _, hp := range strings.Split(u.Host, ",") {
		host, port, err := net.SplitHostPort(hp)
		if err != nil || host == "" {
			return nil, fmt.Errorf("sentinel address %q is not host:port", hp)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("sentinel address %q has no valid port", hp)
		}
		fo.SentinelAddrs = append(fo.SentinelAddrs, hp)
	}
	if path := strings.Trim(u.Path, "/"); path != "" {
		db, err := strconv.Atoi(path)
		if err != nil || db < 0 {
			return nil, fmt.Errorf("database %q is not a number", path)
		}
		fo.DB = db
	}
	if u.User != nil {
		fo.Username = u.User.Username()
		fo.Password, _ = u.User.Password()
		fo.SentinelUsername, fo.SentinelPassword = fo.Username, fo.Password
	}
	// A primary that died leaves connections that fail fast (refused) or
	// hang (a host gone): a short dial timeout keeps a request waiting on
	// the switch to about a second before it is answered 503.
	fo.DialTimeout = time.Second
	return fo, nil
}

// Sentinel reports whether the target is a Sentinel-watched primary.
func (t Target) Sentinel() bool { return t.failover != nil }

// FailoverOptions are the options of a Sentinel target (a copy); nil for a
// single server.
func (t Target) FailoverOptions() *redis.FailoverOptions {
	if t.failover == nil {
		return nil
	}
	fo := *t.failover
	fo.SentinelAddrs = append([]string(nil), t.failover.SentinelAddrs...)
	return &fo
}

// NewClient returns a client for the target: for Sentinel, go-redis's
// failover client, which asks the sentinels for the primary and follows a
// switch without a restart.
func (t Target) NewClient() *redis.Client {
	if t.failover != nil {
		return redis.NewFailoverClient(t.failover)
	}
	return redis.NewClient(t.single)
}

// Open returns a client for REDIS_URL after checking that it is not a Redis
// Cluster node (see RefuseCluster). It does not need Redis to answer: the
// API keeps serving (with its in-process limiter) while Redis is
// unreachable, so an unreachable Redis is not an error here.
func Open(ctx context.Context, raw string) (*redis.Client, error) {
	t, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	rdb := t.NewClient()
	if err := RefuseCluster(ctx, rdb); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	return rdb, nil
}

// ErrCluster says REDIS_URL reached a Redis Cluster node.
var ErrCluster = errors.New("REDIS_URL points at a Redis Cluster node (cluster_enabled:1), which this service does not support " +
	"(it talks to one primary; a cluster answers MOVED for keys other nodes hold): use one Redis primary " +
	"(redis://host:6379/0) or a primary watched by Sentinel (redis-sentinel://s1:26379,s2:26379,s3:26379/0?master=NAME)")

// RefuseCluster asks the server whether it runs in cluster mode (INFO
// cluster) and returns ErrCluster if so. A server that cannot be reached
// within a few seconds is let through: nothing is half-working while
// nothing answers, and the question is asked again at the next start.
func RefuseCluster(ctx context.Context, rdb *redis.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "cluster").Result()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			// What the sentinels answer for a master name they do not know.
			return errors.New("REDIS_URL: no sentinel knows the master named in ?master=")
		}
		if IsUnavailable(err) || errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		return fmt.Errorf("REDIS_URL: INFO cluster: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if strings.TrimSpace(line) == "cluster_enabled:1" {
			return ErrCluster
		}
	}
	return nil
}

// SilenceDriver stops go-redis's own log lines (a process-wide setting, so
// the binaries' main calls it once): with Sentinel it prints every dial and
// sentinel it tries, as plain text with their addresses, beside the
// service's JSON logs. What matters reaches the service's own logs as
// errors (the limiter's fallback, 503s).
func SilenceDriver() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// IsUnavailable reports errors that say Redis could not be reached, went
// away or is switching primaries (a replica that refuses writes, a server
// still loading its data, a primary without its replicas, sentinels that
// cannot be reached); clients get 503 for them, not 500.
func IsUnavailable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		redis.IsReadOnlyError(err) || redis.IsLoadingError(err) || redis.IsMasterDownError(err) ||
		redis.IsTryAgainError(err) || redis.IsClusterDownError(err) || redis.IsNoReplicasError(err)
}
