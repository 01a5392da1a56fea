// Package deploy holds what runs the service outside a developer's machine:
// the container image (Dockerfile), the Compose file's checks and the
// Kubernetes manifests (k8s/). Its tests load those files with the loaders
// of their own formats and check them against internal/config, since no
// Docker engine or cluster runs where the tests do.
package deploy
