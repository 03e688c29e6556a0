/**
 * bench/scheduler-tracing's OTLP/HTTP receiver, in a process of its own (forked by
 * run.ts): decodes each JSON export as a collector would and counts its spans, answers
 * 200 at once. Asked `count` over IPC, it answers the spans received so far and the
 * bodies it could not decode.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface OtlpTraces {
  resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[];
}

let spans = 0;
let refused = 0;
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces;
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
      }
    } catch {
      refused++;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.on('message', (message) => {
  if (message === 'count') process.send?.({ spans, refused });
});
process.on('disconnect', () => server.close());
process.send?.({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
