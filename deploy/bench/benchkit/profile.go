package benchkit

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfile starts a CPU profile written to path and returns the function
// that stops it and closes the file. An empty path profiles nothing.
func CPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "cpu profile:", err)
		}
	}, nil
}
