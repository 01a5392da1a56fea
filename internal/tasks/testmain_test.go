package tasks_test

import (
	"testing"

	"go.uber.org/goleak"

	"broll/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testkit.LeakOptions()...)
}
