package admission

// EpochKey is where the admission keeps the Redis epoch, for the tests
// that play another node writing it.
func EpochKey(prefix string) string { return epochKey(prefix) }
