package worker

// Backoff exposes the retry delay function to the tests.
var Backoff = backoff
