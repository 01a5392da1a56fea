package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// cpuMeter reads the CPU time spent so far by the three parties of a
// request: this process (the node and the load generator), Redis (INFO
// cpu) and the Postgres backends of the benchmark's database (their
// /proc entries, when Postgres runs on this machine). On a machine shared
// with other work, CPU time per request moves much less than requests per
// second do.
type cpuMeter struct {
	pool *pgxpool.Pool
	rdb  *redis.Client
}

type cpuSample struct {
	self, redis, postgres time.Duration
	postgresSeen          bool
}

func (m cpuMeter) sample(ctx context.Context) cpuSample {
	var s cpuSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if info, err := m.rdb.Info(ctx, "cpu").Result(); err == nil {
		for _, line := range strings.Split(info, "\r\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
				f, _ := strconv.ParseFloat(v, 64)
				s.redis += time.Duration(f * float64(time.Second))
			}
		}
	}
	rows, err := m.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return s
	}
	defer rows.Close()
	tick := time.Second / 100 // USER_HZ on Linux
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		_, rest, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		s.postgres += time.Duration(utime+stime) * tick
		s.postgresSeen = true
	}
	return s
}
