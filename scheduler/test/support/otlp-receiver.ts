import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OTLP/HTTP receiver: accepts the JSON the OpenTelemetry exporter sends to
 * `/v1/traces` and keeps every span; any other path is accepted and dropped.
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  /** The attributes, values as their JSON scalars (intValue arrives as a string). */
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  origin: string;
  spans(): ReceivedSpan[];
  /** Bodies that were not OTLP JSON (a protobuf export, say): a test insists there are none. */
  refused(): string[];
  close(): Promise<void>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}

interface OtlpTraces {
  resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces;
          for (const resource of body.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) {
              for (const span of scope.spans ?? []) {
                spans.push({
                  traceId: span.traceId,
                  spanId: span.spanId,
                  parentSpanId: span.parentSpanId || undefined,
                  name: span.name,
                  kind: span.kind,
                  attributes: Object.fromEntries(
                    (span.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]),
                  ),
                });
              }
            }
          }
        } catch {
          refused.push(String(request.headers['content-type']));
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...spans],
    refused: () => [...refused],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
