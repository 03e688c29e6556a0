/**
 * JSON from another service (identity provider keys, geocoder), with the limits a
 * server needs when it is the client: a deadline covering headers and body, a cap on
 * the body size (an endless answer must not grow memory), and a status check.
 */
export type OutboundFailure = 'network' | 'timeout' | 'status' | 'too-large' | 'not-json';

export class OutboundError extends Error {
  override name = 'OutboundError';
  constructor(
    readonly failure: OutboundFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface FetchJsonOptions {
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
}

async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new OutboundError('too-large', `response body exceeds ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export async function fetchJson(url: URL, options: FetchJsonOptions): Promise<unknown> {
  // One deadline for the whole exchange: a server trickling its body is cut off too.
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json', ...options.headers },
      signal,
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new OutboundError('status', `answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      await response.body?.cancel();
      throw new OutboundError('too-large', `response body of ${declared} bytes exceeds ${options.maxBytes}`);
    }
    const bytes = response.body ? await readCapped(response.body, options.maxBytes) : Buffer.alloc(0);
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
    } catch (error) {
      throw new OutboundError('not-json', 'response body is not JSON', { cause: error });
    }
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    if (signal.aborted)
      throw new OutboundError('timeout', `no complete answer within ${options.timeoutMs} ms`);
    throw new OutboundError('network', `unreachable: ${(error as Error).message}`, { cause: error });
  }
}
