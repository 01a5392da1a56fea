package deploy

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"broll/internal/config"
)

// knownEnv is every variable config.Load reads, found by calling it with a
// getenv that records the names it is asked for. It follows the config
// package by construction: a variable added there is known here at once.
func knownEnv(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	_, _ = config.Load(func(name string) string {
		names[name] = true
		return ""
	})
	// The recorder must have seen the variables every deployment sets; if
	// Load stopped early, the set would be too small to judge anything.
	for _, must := range []string{"DATABASE_URL", "REDIS_URL", "BROLL_SIGNING_KEY", "BROLL_MEDIA_DIR", "BROLL_LOG_LEVEL"} {
		if !names[must] {
			t.Fatalf("config.Load did not read %s; known names: %v", must, sorted(names))
		}
	}
	return names
}

// isServiceVar says whether a variable name is one of the service's own,
// as opposed to one meant for a third-party image (POSTGRES_PASSWORD).
func isServiceVar(name string) bool {
	return strings.HasPrefix(name, "BROLL_") || name == "DATABASE_URL" || name == "REDIS_URL" || name == "OLLAMA_HOST"
}

// loadConfig runs config.Load over a fixed environment, as the programs do
// over theirs.
func loadConfig(env map[string]string) (config.Config, error) {
	return config.Load(func(name string) string { return env[name] })
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mustAtoi(t *testing.T, s string) uint32 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		t.Fatalf("%q is not a port: %v", s, err)
	}
	return uint32(n)
}
