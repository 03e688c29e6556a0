import { connect as tlsConnect } from 'node:tls';
import { Agent, type buildConnector, type Dispatcher, request } from 'undici';
import { MAX_ANSWER_BYTES } from './limits.ts';

/**
 * GET of a local endpoint for an adapter: a deadline for the whole answer, at most
 * MAX_ANSWER_BYTES read, no redirects. TLS trusts the system's CAs, a given CA, or (for
 * the self-signed certificates appliances on a LAN tend to have) exactly one certificate,
 * pinned by its SHA-256 fingerprint.
 */
export interface TlsTrust {
  ca?: string;
  /** `AB:CD:...` (any case). */
  fingerprint?: string;
}

export class AdapterError extends Error {
  override name = 'AdapterError';
}

/** A connector that accepts exactly the certificate with this fingerprint, whoever signed it. */
function pinnedConnector(fingerprint: string, timeoutMs: number): buildConnector.connector {
  const expected = fingerprint.toUpperCase();
  return (options, callback) => {
    const socket = tlsConnect({
      host: options.hostname,
      port: Number(options.port),
      servername: options.servername ?? undefined,
      // Chain and name are not what is trusted here; the exact certificate is.
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => {
      const seen = socket.getPeerCertificate().fingerprint256?.toUpperCase();
      if (seen === expected) {
        callback(null, socket);
      } else {
        socket.destroy();
        callback(
          new AdapterError(`certificate fingerprint ${seen ?? 'missing'} is not the pinned ${expected}`),
          null,
        );
      }
    });
    socket.once('timeout', () => socket.destroy(new AdapterError('connection timed out')));
    socket.once('error', (error) => callback(error, null));
  };
}

export function adapterAgent(trust: TlsTrust, timeoutMs: number): Dispatcher {
  if (trust.fingerprint) return new Agent({ connect: pinnedConnector(trust.fingerprint, timeoutMs) });
  return new Agent({ connect: { timeout: timeoutMs, ...(trust.ca ? { ca: trust.ca } : {}) } });
}

/** The body of a 2xx answer as text; anything else is an AdapterError saying what happened. */
export async function getText(
  url: string,
  options: { dispatcher: Dispatcher; timeoutMs: number; headers?: Record<string, string> },
): Promise<string> {
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      dispatcher: options.dispatcher,
      headers: { accept: 'application/json', 'user-agent': 'advisory-appliance', ...options.headers },
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    throw new AdapterError(`${new URL(url).origin}: ${describe(error)}`);
  }
  if (response.statusCode < 200 || response.statusCode > 299) {
    await response.body.dump();
    throw new AdapterError(`${url} answered HTTP ${response.statusCode}`);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length > MAX_ANSWER_BYTES) {
        response.body.destroy();
        throw new AdapterError(`${url}: answer larger than ${MAX_ANSWER_BYTES} bytes`);
      }
    }
  } catch (error) {
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(`${url}: ${describe(error)}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function getJson(
  url: string,
  options: { dispatcher: Dispatcher; timeoutMs: number; headers?: Record<string, string> },
): Promise<unknown> {
  const text = await getText(url, options);
  try {
    return JSON.parse(text);
  } catch {
    throw new AdapterError(`${url}: the answer is not JSON`);
  }
}

function describe(error: unknown): string {
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError') return 'timed out';
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.message ?? cause?.code ?? (error as Error).message;
}
