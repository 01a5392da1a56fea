package metrics

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildInfo is broll_build_info{version,go_version,revision}, always 1:
// which build a process runs, read from the binary's own build
// information, so that a scrape tells which nodes still run an old one.
// A build without module or VCS information (go run, a build from a tree
// without .git) says "unknown"; a revision with uncommitted changes ends
// in "-dirty".
func buildInfo() prometheus.Gauge {
	version, revision, goVersion := "unknown", "unknown", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && revision != "unknown" {
			revision += "-dirty"
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help:        "Always 1; its labels name the build: module version, Go version and VCS revision.",
		ConstLabels: prometheus.Labels{"version": version, "go_version": goVersion, "revision": revision},
	})
	g.Set(1)
	return g
}
