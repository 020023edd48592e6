package worker

import (
	"context"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/virtflow/virtflow/internal/platform/telemetry"
)

// tracerName names the worker's tracer.
const tracerName = "github.com/virtflow/virtflow/controllers/worker"

// traced is the Asynq middleware that runs each task in a consumer span, the child of the
// trace context in the task's headers (the outbox relay's span, itself the child of the
// request that recorded the task), so one trace goes from the API request to the worker
// and on to the SQL the handler runs. A task without headers starts no span: with tracing
// off nothing is recorded and nothing is paid but the header lookup.
func traced(tp trace.TracerProvider) asynq.MiddlewareFunc {
	tracer := tp.Tracer(tracerName)
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			h := t.Headers()
			if len(h) == 0 {
				return next.ProcessTask(ctx, t)
			}
			id, _ := asynq.GetTaskID(ctx)
			queue, _ := asynq.GetQueueName(ctx)
			retried, _ := asynq.GetRetryCount(ctx)
			ctx, span := tracer.Start(telemetry.Propagator().Extract(ctx, propagation.MapCarrier(h)),
				"asynq task "+t.Type(), trace.WithSpanKind(trace.SpanKindConsumer),
				trace.WithAttributes(attribute.String("messaging.system", "asynq"),
					attribute.String("messaging.destination.name", queue),
					attribute.String("messaging.message.id", id),
					attribute.Int("asynq.retried", retried)))
			defer span.End()
			err := next.ProcessTask(ctx, t)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		})
	}
}
