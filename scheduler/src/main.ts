import { ConfigError, tracingConfig } from './config.ts';
import type { Tracing } from './tracing/sdk.ts';

/**
 * The server's entry point. OpenTelemetry tracing (docs/operations.md, Traces), when the
 * OTEL_* settings turn it on, starts first: its instrumentations must be in place before
 * fastify, pg and node:http load, so the server (src/server.ts) is imported only then.
 * With tracing off no SDK module is loaded at all (it needs Node 22.15; the server runs on
 * Node 20 too).
 */
let tracing: Tracing | undefined;
try {
  const config = tracingConfig();
  if (config.enabled) tracing = await (await import('./tracing/sdk.ts')).startTracing(config);
} catch (error) {
  const message =
    error instanceof ConfigError ? `configuration error: ${error.message}` : `tracing: ${String(error)}`;
  console.error(`scheduler: ${message}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}
await (await import('./server.ts')).startServer(tracing);
