package tasks

import (
	"context"
	"encoding/json"

	"broll/internal/telemetry"
)

// Trace is the part of every payload that carries the trace of the work
// that queued the task: the W3C traceparent of its span, absent for none
// (and in the tasks of earlier releases). The worker's span of the task is
// that span's child, so a job done on a worker continues the request, or
// the job, that asked for it.
type Trace struct {
	Traceparent string `json:"traceparent,omitempty"`
}

func traceOf(ctx context.Context) Trace { return Trace{Traceparent: telemetry.Traceparent(ctx)} }

// Traceparent is the traceparent a task's payload carries, "" for none or
// for a payload that is not an object.
func Traceparent(payload []byte) string {
	var t Trace
	if json.Unmarshal(payload, &t) != nil {
		return ""
	}
	return t.Traceparent
}
