import type { RequestOptions } from 'node:http';
import { register } from 'node:module';
import { originOf, tracedPath, withoutLiterals } from './redact.ts';

/**
 * OpenTelemetry traces for this process (docs/operations.md, Traces): the official Node
 * SDK, an OTLP/HTTP (JSON) exporter configured by the standard OTEL_* variables, and the
 * maintained instrumentations of Node's HTTP server and client, Fastify and pg.
 *
 * Loaded only when tracing is configured (src/main.ts imports this module dynamically,
 * after config.ts's tracingConfig said so), and before anything imports fastify, pg or
 * node:http: the instrumentations patch those modules as they load. Every package of the
 * SDK is imported dynamically here too, so a build that bundles this file still loads
 * none of them with tracing off (they need Node 22.15).
 */
export interface Tracing {
  /** Sends the spans still buffered and stops; resolves whatever the receiver does. */
  shutdown(): Promise<void>;
}

export async function startTracing(options: { serviceName: string }): Promise<Tracing> {
  // ES modules are patched through import-in-the-middle's loader hook, registered before
  // the modules to patch are imported (src/server.ts and all it loads come after this).
  // Through its message channel the hook wraps only the modules an instrumentation hooks
  // (node:http, node:https, pg, pg-pool): each instrumentation tells it as it is created,
  // below. Without the channel it would wrap every module the server imports.
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const [
    { NodeSDK },
    { OTLPTraceExporter },
    { HttpInstrumentation },
    { PgInstrumentation },
    { FastifyOtelInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@fastify/otel'),
  ]);
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    traceExporter: new OTLPTraceExporter(),
    // Traces only: logs stay with pino (stdout), metrics with /metrics.
    logRecordProcessors: [],
    metricReaders: [],
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes every few seconds would drown the traces that matter.
        ignoreIncomingRequestHook: (request) => /^\/(health|ready|metrics)(\?|$)/.test(request.url ?? ''),
        // Outgoing requests outside a trace (key refreshes, the OTLP export itself) are not traced.
        requireParentforOutgoingSpans: true,
        // Attributes that replace the defaults: no secret of an address in a trace.
        startIncomingSpanHook: (request) => ({ 'url.path': tracedPath(request.url ?? '') }),
        startOutgoingSpanHook: (options) => ({ 'url.full': originOf(outgoingUrl(options)) }),
      }),
      new PgInstrumentation({
        // Statements with a request or a job around them; the worker's polling is not traced.
        requireParentSpan: true,
        // The statement's text only: its parameters hold tenant ids and people's data.
        enhancedDatabaseReporting: false,
        // …and without the literals a few statements carry (the tenant and the user).
        requestHook: (span, { query }) => span.setAttribute('db.query.text', withoutLiterals(query.text)),
      }),
      // Fastify's own instrumentation, attached to every instance as it is created.
      // The calendar feed's path is its secret: its requests keep only the HTTP span.
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        ignorePaths: (route: { url: string }) => route.url.startsWith('/cal/'),
      }),
    ],
  });
  sdk.start();
  // The hook has the list of the modules to wrap before the server imports any of them.
  await waitForAllMessagesAcknowledged();
  // The HTTP instrumentation patches node:http (node:https) once, through whichever view
  // reaches it first. Through the ES module's namespace it patches the CommonJS object too;
  // the other way round, the senders' `import { request } from 'node:http'` would keep
  // the unpatched function (fastify's require comes first otherwise). These imports go
  // through the hook now that it wraps them: the namespace is patched first.
  await Promise.all([import('node:http'), import('node:https')]);
  return { shutdown: () => sdk.shutdown() };
}

/** Where an outgoing request goes, from the options the HTTP client was given: its origin only. */
function outgoingUrl(options: RequestOptions): string {
  const host = options.hostname ?? options.host ?? 'localhost';
  return `${options.protocol ?? 'http:'}//${host}${options.port ? `:${options.port}` : ''}`;
}
