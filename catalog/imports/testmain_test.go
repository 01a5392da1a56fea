package imports

import (
	"testing"

	"go.uber.org/goleak"

	"broll/internal/testkit"
)

// TestMain fails the package when a test leaves a goroutine running: a
// leaked client, ticker or server outlives the test that started it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testkit.LeakOptions()...)
}
