package marks_test

import (
	"testing"

	"go.uber.org/goleak"

	"broll/internal/testkit"
)

// TestMain fails the package when a test leaves a goroutine running (a
// release retry that outlives Close, say).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testkit.LeakOptions()...)
}
