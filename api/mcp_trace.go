package api

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"broll/internal/classify"
)

// startTool starts the span of one MCP tool call, a child of the /mcp
// request's span, named for the tool. Its arguments are never recorded:
// they carry search texts, licensee names and emails.
func (s *mcpTools) startTool(ctx context.Context, tool string) (context.Context, trace.Span) {
	ctx, span := s.tracer.Start(ctx, "mcp tool "+tool)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("mcp.tool.name", tool))
	}
	return ctx, span
}

// endTool records a tool call's outcome by its error code alone (the
// message may quote what the caller sent) and ends its span.
func endTool(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		out := classify.Error(err)
		span.SetAttributes(attribute.String("error.type", string(out.Err.Code)))
		if out.Status >= 500 {
			span.SetStatus(codes.Error, "")
		}
	}
	span.End()
}
