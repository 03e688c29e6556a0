import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/**
 * The trace a job belongs to (docs/operations.md, Traces): the W3C `traceparent` of the
 * request that queued it rides in the job's payload (`traceparent`), and the job's run is
 * a span in that trace. Only the API package is used here: with tracing off (no SDK
 * registered) it does nothing, and no payload gains the key.
 */
export const TRACEPARENT_KEY = 'traceparent';

/** The active trace's `traceparent` header value; undefined outside a sampled trace or with tracing off. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** `payload` with the active trace's context added, or `payload` itself when there is none. */
export function withTraceContext(payload: Record<string, unknown>): Record<string, unknown> {
  const traceparent = currentTraceparent();
  return traceparent === undefined ? payload : { ...payload, [TRACEPARENT_KEY]: traceparent };
}

/** The context a payload's `traceparent` names; the root context when it holds none. */
function parentOf(payload: Record<string, unknown>): Context {
  const traceparent = payload[TRACEPARENT_KEY];
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Runs `work` outside any trace: the job worker's own statements belong to no request. */
export function outsideTraces<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}

/**
 * Runs one attempt of a job as span `job <kind>`, a child of the trace its payload names
 * (or a trace of its own); what the job does (its SQL, its HTTP POST) nests inside. Its
 * attributes: the kind and the attempt, never the tenant or the payload.
 */
export function inJobSpan<T>(
  job: { kind: string; attempts: number; payload: Record<string, unknown> },
  work: () => Promise<T>,
  outcome: (result: T) => string,
): Promise<T> {
  const tracer = trace.getTracer('scheduler');
  return tracer.startActiveSpan(
    `job ${job.kind}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'scheduler.job.kind': job.kind, 'scheduler.job.attempt': job.attempts },
    },
    parentOf(job.payload),
    async (span: Span) => {
      try {
        const result = await work();
        span.setAttribute('scheduler.job.outcome', outcome(result));
        return result;
      } catch (error) {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : String(error),
        });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
