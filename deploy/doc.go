// Package deploy holds what runs the service outside a developer's machine:
// the container images (Dockerfile: the static one and the worker's, with
// ffmpeg), the Compose file's checks, the Kubernetes manifests (k8s/) and
// their overlays (overlays/s3: the s3 media store; overlays/monitoring: the
// alerting rules of monitoring/ as a PrometheusRule). Its tests load those files with the loaders
// of their own formats and check them against internal/config, since no
// Docker engine or cluster runs where the tests do.
package deploy
