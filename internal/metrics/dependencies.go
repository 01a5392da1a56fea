package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// dependencyTimeout bounds one check at a scrape, well under Prometheus'
// default scrape timeout (10 s), so that a dependency that hangs reads 0
// rather than failing the scrape.
const dependencyTimeout = 2 * time.Second

// Dependencies registers broll_dependency_up{dependency}: at each scrape,
// 1 for a dependency whose check (a ping: one round trip) answers within
// two seconds, 0 otherwise. The alert rules read it for "Postgres or Redis
// unavailable" as this process sees them.
func Dependencies(reg prometheus.Registerer, checks map[string]func(context.Context) error) {
	for name, check := range checks {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace:   Namespace,
			Name:        "dependency_up",
			Help:        "1 when the dependency answered this process at the scrape (a ping within 2s), 0 otherwise.",
			ConstLabels: prometheus.Labels{"dependency": name},
		}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), dependencyTimeout)
			defer cancel()
			if check(ctx) != nil {
				return 0
			}
			return 1
		}))
	}
}
