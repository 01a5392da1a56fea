package webhook

// outcome names an attempt for the delivery metrics
// (DelivererOptions.Observe): delivered, rejected (the endpoint answered a
// non-2xx status) or failed (no answer at all).
func (r result) outcome() string {
	switch {
	case r.ok():
		return "delivered"
	case r.status != 0:
		return "rejected"
	default:
		return "failed"
	}
}
