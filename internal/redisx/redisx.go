// Package redisx opens the service's Redis client from REDIS_URL.
package redisx

import (
	"fmt"

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
