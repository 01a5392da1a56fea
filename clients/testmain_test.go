// Package clients_test drives the generated clients (clients/go, a module
// of its own, and clients/ts) against live nodes: installed from an empty
// folder as their READMEs say, money round trips, retries and idempotency.
package clients_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"broll/internal/testkit"
)

// TestMain fails the package when a test leaves a goroutine running: a
// leaked client, ticker or server outlives the test that started it. It
// removes the packed TypeScript client at the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, append(testkit.LeakOptions(), goleak.Cleanup(func(int) { _ = os.RemoveAll(packDir) }))...)
}
