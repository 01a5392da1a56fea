// Package redisx opens the service's Redis client from REDIS_URL.
package redisx

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/redis/go-redis/v9"
)

// Open returns a client for url. It does not ping: the API keeps serving
// (with its in-process limiter) while Redis is unreachable.
func Open(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return redis.NewClient(opts), nil
}

// IsUnavailable reports errors that say Redis could not be reached or went
// away; clients get 503 for them, not 500.
func IsUnavailable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
