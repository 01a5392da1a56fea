package benchkit

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

// CPUMeter reads the CPU time spent so far by the three parties of a
// request: this process (the node and the load generator), Redis (INFO
// cpu) and the Postgres backends of the benchmark's database (their
// /proc entries, when Postgres runs on this machine). On a machine shared
// with other work, CPU time per request moves much less than requests per
// second do.
type CPUMeter struct {
	Pool  *pgxpool.Pool
	Redis *redis.Client
}

// CPUSample is the CPU time each party had spent when it was taken, or
// between two samples (Sub).
type CPUSample struct {
	Self, Redis, Postgres time.Duration
	// PostgresSeen: the backends' /proc entries could be read.
	PostgresSeen bool
}

// Sub is the CPU time spent from before to s.
func (s CPUSample) Sub(before CPUSample) CPUSample {
	return CPUSample{Self: s.Self - before.Self, Redis: s.Redis - before.Redis,
		Postgres: s.Postgres - before.Postgres, PostgresSeen: s.PostgresSeen && before.PostgresSeen}
}

// Total is the three parties' CPU time together.
func (s CPUSample) Total() time.Duration { return s.Self + s.Redis + s.Postgres }

// Sample reads the three parties' CPU time so far.
func (m CPUMeter) Sample(ctx context.Context) CPUSample {
	var s CPUSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.Self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if info, err := m.Redis.Info(ctx, "cpu").Result(); err == nil {
		for _, line := range strings.Split(info, "\r\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
				f, _ := strconv.ParseFloat(v, 64)
				s.Redis += time.Duration(f * float64(time.Second))
			}
		}
	}
	rows, err := m.Pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
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
		s.Postgres += time.Duration(utime+stime) * tick
		s.PostgresSeen = true
	}
	return s
}
