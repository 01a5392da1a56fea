package testkit

import "go.uber.org/goleak"

// LeakOptions are what every package's TestMain passes to
// goleak.VerifyTestMain: goroutines that libraries start and that no test can
// stop, so they are not leaks of ours.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		// fasthttp (under fiber) starts one clock goroutine for the Date
		// header the first time any server runs, and it never exits.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// A fiber server's worker-pool cleaner sees Shutdown only when its
		// sleep of MaxIdleWorkerDuration (10 s, not settable through fiber)
		// ends, so it outlives a server the test did shut down. A server
		// left running still shows up: its accept loop is not ignored.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		// fasthttp compresses responses on a process-wide pool of workers
		// that it starts on first use and never stops.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp/stackless.funcWorker"),
	}
}
