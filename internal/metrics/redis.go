package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// RegisterRedisPool exports the Redis client's connection pool, read from
// its own counters at each scrape (no round trip): broll_redis_pool_conns
// by state (in_use, idle), broll_redis_pool_max_conns (the pool's size),
// and the waits for a connection: broll_redis_pool_waits_total,
// broll_redis_pool_wait_seconds_total and broll_redis_pool_timeouts_total
// (commands that found no connection within the pool timeout).
func RegisterRedisPool(reg prometheus.Registerer, rdb *redis.Client) {
	reg.MustRegister(&redisPool{rdb: rdb,
		conns: prometheus.NewDesc(Namespace+"_redis_pool_conns",
			"Connections of the Redis client's pool by state: in_use or idle.", []string{"state"}, nil),
		max: prometheus.NewDesc(Namespace+"_redis_pool_max_conns",
			"The Redis client's pool size: the most connections it opens.", nil, nil),
		waits: prometheus.NewDesc(Namespace+"_redis_pool_waits_total",
			"Commands that waited for a connection of the Redis pool.", nil, nil),
		waited: prometheus.NewDesc(Namespace+"_redis_pool_wait_seconds_total",
			"Time commands spent waiting for a connection of the Redis pool.", nil, nil),
		timeouts: prometheus.NewDesc(Namespace+"_redis_pool_timeouts_total",
			"Commands that found no connection of the Redis pool within its timeout.", nil, nil),
	})
}

type redisPool struct {
	rdb                                 *redis.Client
	conns, max, waits, waited, timeouts *prometheus.Desc
}

func (p *redisPool) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.conns, p.max, p.waits, p.waited, p.timeouts} {
		ch <- d
	}
}

func (p *redisPool) Collect(ch chan<- prometheus.Metric) {
	s := p.rdb.PoolStats()
	idle := float64(s.IdleConns)
	ch <- prometheus.MustNewConstMetric(p.conns, prometheus.GaugeValue, float64(s.TotalConns)-idle, "in_use")
	ch <- prometheus.MustNewConstMetric(p.conns, prometheus.GaugeValue, idle, "idle")
	ch <- prometheus.MustNewConstMetric(p.max, prometheus.GaugeValue, float64(p.rdb.Options().PoolSize))
	ch <- prometheus.MustNewConstMetric(p.waits, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(p.waited, prometheus.CounterValue, float64(s.WaitDurationNs)/1e9)
	ch <- prometheus.MustNewConstMetric(p.timeouts, prometheus.CounterValue, float64(s.Timeouts))
}
