// Package local holds the scripts of the local stack; this test checks that
// re-running them is safe and cheap.
package local

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func runStack(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"stack.sh"}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestUpIsIdempotent re-runs `stack.sh up` on the running stack: it must
// succeed, install, build and initialise nothing, and write the same env.
func TestUpIsIdempotent(t *testing.T) {
	if os.Getenv("BROLL_STACK_DIR") != "" {
		t.Skip("a custom stack dir is in use")
	}
	var envs []string
	for i := 0; i < 2; i++ {
		out, stderr, err := runStack(t, "up")
		if err != nil {
			t.Fatalf("up #%d: %v\n%s", i+1, err, stderr)
		}
		for _, word := range []string{"installing", "building", "initdb", "fetching"} {
			if strings.Contains(stderr, word) {
				t.Errorf("up #%d on a running stack did work (%q): %s", i+1, word, stderr)
			}
		}
		if !strings.Contains(out, "DATABASE_URL=postgres://") || !strings.Contains(out, "REDIS_URL=redis://") {
			t.Fatalf("up #%d printed %q", i+1, out)
		}
		envs = append(envs, out)
	}
	if envs[0] != envs[1] {
		t.Fatalf("env changed between runs: %q vs %q", envs[0], envs[1])
	}
	if out, _, err := runStack(t, "status"); err != nil || !strings.Contains(out, "postgres: running") || !strings.Contains(out, "redis: running") {
		t.Fatalf("status: %v %s", err, out)
	}
	if _, stderr, err := runStack(t, "bogus"); err == nil || !strings.Contains(stderr, "usage") {
		t.Fatalf("unknown subcommand accepted: %v %s", err, stderr)
	}
}
