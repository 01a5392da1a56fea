package worker

import "github.com/prometheus/client_golang/prometheus"

// Backoff exposes the retry delay function to the tests.
var Backoff = backoff

// Queues exposes the queues, with their priorities, that a worker of opts
// takes tasks from in the deployment whose Redis keys start with prefix.
func Queues(prefix string, opts Options) map[string]int {
	return (&Worker{opts: opts, prefix: prefix}).queues()
}

// RegisterMetrics registers a worker's metrics on reg, as New does.
var RegisterMetrics = func(reg prometheus.Registerer) { newWorkerMetrics(reg) }
