package worker

import (
	"github.com/prometheus/client_golang/prometheus"

	"broll/billing/license"
	"broll/internal/metrics"
)

// workerMetrics count embedding jobs and batches. Queue depth (pending,
// retry, archived, ...) comes from asynq's own collector on the same
// registry.
type workerMetrics struct {
	jobs       *prometheus.CounterVec
	jobLatency prometheus.Histogram
	batches    *prometheus.CounterVec
	batchTime  prometheus.Histogram
	batchSize  prometheus.Histogram
	// Media jobs: probing, previews and thumbnails.
	mediaJobs    *prometheus.CounterVec
	mediaLatency prometheus.Histogram
	// Preview jobs: previews and thumbnails made after the sale.
	previewJobs *prometheus.CounterVec
	// Licence stamps: remuxed copies of purchased files.
	stampJobs    *prometheus.CounterVec
	stampLatency prometheus.Histogram
}

func newWorkerMetrics(reg prometheus.Registerer) *workerMetrics {
	m := &workerMetrics{
		jobs: metrics.CounterVec("embed_jobs_total",
			"Clips through embedding (an embedding task or a media batch) by outcome: done, retry (failed, will be retried), failed (gave up, archived), gone (clip deleted), current (vector already of this model, nothing to do), interrupted (shutdown).",
			"result"),
		jobLatency: metrics.Histogram("embed_job_duration_seconds",
			"Time an embedding task spends in the worker: loading, embedding and storing its clips.", prometheus.ExponentialBuckets(0.005, 2, 14)),
		batches: metrics.CounterVec("embed_batches_total", "Embedder calls by outcome (ok, error).", "result"),
		batchTime: metrics.Histogram("embed_batch_duration_seconds",
			"Time to embed and store one embedder call's clips.", prometheus.ExponentialBuckets(0.005, 2, 14)),
		batchSize: metrics.Histogram("embed_batch_size", "Clips per embedder call.", []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}),
		mediaJobs: metrics.CounterVec("media_jobs_total",
			"Clips through media jobs (probe, embedding, sale) by outcome: done, refused (unreadable file, clip failed), retry, failed (gave up, archived), gone, interrupted; reprobed (read again by clips reprobe).",
			"result"),
		mediaLatency: metrics.Histogram("media_job_duration_seconds",
			"Time to probe, embed and put on sale one batch of clips.", prometheus.ExponentialBuckets(0.05, 2, 12)),
		previewJobs: metrics.CounterVec("preview_jobs_total",
			"Clips whose missing preview and thumbnail a preview job made (done), or failed to make (retry, failed).",
			"result"),
		stampJobs: metrics.CounterVec("license_stamp_jobs_total",
			"Licence stamp jobs by outcome: stamped, current (a copy was there), not_needed (test purchase), unsupported (the container cannot carry it), retry, failed (gave up: the original is served), gone, interrupted.",
			"result"),
		stampLatency: metrics.Histogram("license_stamp_duration_seconds",
			"Time to remux a purchased file with its licence and store the copy.", prometheus.ExponentialBuckets(0.05, 2, 12)),
	}
	if reg != nil {
		reg.MustRegister(m.jobs, m.jobLatency, m.batches, m.batchTime, m.batchSize, m.mediaJobs, m.mediaLatency, m.previewJobs,
			m.stampJobs, m.stampLatency)
	}
	// Every outcome from the start: a rate or a ratio over them reads 0 on
	// a fresh worker, not "no data".
	for _, r := range []string{string(license.Stamped), string(license.StampCurrent), string(license.StampNotNeeded),
		string(license.StampUnsupported), string(license.StampRevoked), "retry", "failed", "gone", "interrupted"} {
		m.stampJobs.WithLabelValues(r)
	}
	for _, r := range []string{"done", "retry", "failed"} {
		m.previewJobs.WithLabelValues(r)
	}
	return m
}
