package worker

// Backoff exposes the retry delay function to the tests.
var Backoff = backoff

// Queues exposes the queues, with their priorities, that a worker of opts
// takes tasks from.
func Queues(opts Options) map[string]int { return (&Worker{opts: opts}).queues() }
