package tasks

import (
	"fmt"

	"github.com/hibiken/asynq"

	"broll/internal/redisx"
)

// RedisConnOpt is asynq's connection for REDIS_URL, read by redisx like the
// rest of the service's Redis, so that the queue reaches the same server in
// the same database: for redis-sentinel:// asynq's failover option (which
// asks the sentinels for the primary and follows a switch), with the
// database and password that asynq's own URL parser leaves out.
func RedisConnOpt(url string) (asynq.RedisConnOpt, error) {
	t, err := redisx.Parse(url)
	if err != nil {
		return nil, err
	}
	fo := t.FailoverOptions()
	if fo == nil {
		opt, err := asynq.ParseRedisURI(url)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		return opt, nil
	}
	return asynq.RedisFailoverClientOpt{
		MasterName:       fo.MasterName,
		SentinelAddrs:    fo.SentinelAddrs,
		SentinelUsername: fo.SentinelUsername,
		SentinelPassword: fo.SentinelPassword,
		Username:         fo.Username,
		Password:         fo.Password,
		DB:               fo.DB,
		DialTimeout:      fo.DialTimeout,
	}, nil
}
