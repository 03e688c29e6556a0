import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import PQueue from 'p-queue';
import { Agent, type buildConnector, type Dispatcher, request } from 'undici';
import { InputProblem } from '../../errors.ts';
import { MAX_ANSWER_BYTES, STOPPED } from './limits.ts';

/**
 * GET of a local endpoint for an adapter: a deadline for the whole answer, at most
 * MAX_ANSWER_BYTES read, no redirects. TLS trusts the system's CAs, a given CA, or (for
 * the self-signed certificates appliances on a LAN tend to have) exactly one certificate,
 * pinned by its SHA-256 fingerprint. An adapter makes one session per collection and
 * sends all its requests through it: at most `concurrency` of them open at once, over as
 * many keep-alive connections, so a source that asks one host many things (a Proxmox
 * node's guests, Nextcloud's apps) does a handful of TLS handshakes per collection, not
 * one per request, and one slow answer does not hold up the others.
 */
export interface TlsTrust {
  ca?: string;
  /** `AB:CD:...` (any case). */
  fingerprint?: string;
}

export class AdapterError extends InputProblem {
  override name = 'AdapterError';
  /** The HTTP status of the answer, when a non-2xx answer was the problem. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

/**
 * The name a TLS connection asks for (SNI). undici hands a connector of its own none, so
 * without this a server that serves several names (a reverse proxy in front of Proxmox or
 * Nextcloud) would show its default certificate, not the one pinned. An address is not
 * sent: TLS names hosts only.
 */
function serverName(options: { hostname: string; servername?: string | null }): string | undefined {
  if (options.servername) return options.servername;
  const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? undefined : host;
}

/** A connector that accepts exactly the certificate with this fingerprint, whoever signed it. */
function pinnedConnector(fingerprint: string, timeoutMs: number): buildConnector.connector {
  const expected = fingerprint.toUpperCase();
  return (options, callback) => {
    const socket = tlsConnect({
      host: options.hostname,
      port: Number(options.port),
      servername: serverName(options),
      // Chain and name are not what is trusted here; the exact certificate is.
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
      timeout: timeoutMs,
    });
    const onTimeout = () => socket.destroy(new AdapterError('connection timed out'));
    const onError = (error: Error) => callback(error, null);
    socket.once('timeout', onTimeout);
    socket.once('error', onError);
    socket.once('secureConnect', () => {
      const seen = socket.getPeerCertificate().fingerprint256?.toUpperCase();
      if (seen === expected) {
        // Connected: from now on the socket is undici's, kept alive between requests with
        // undici's own timeouts; the connect-phase handlers would answer a second time.
        socket.off('timeout', onTimeout);
        socket.off('error', onError);
        socket.setTimeout(0);
        callback(null, socket);
      } else {
        socket.destroy();
        callback(
          new AdapterError(`certificate fingerprint ${seen ?? 'missing'} is not the pinned ${expected}`),
          null,
        );
      }
    });
  };
}

/**
 * The dispatcher of one collection: up to `concurrency` keep-alive connections per host,
 * each sending one request at a time (no pipelining, which a server may not support), an
 * idle connection kept for 10 s. Close it when the collection ends.
 */
function adapterAgent(trust: TlsTrust, timeoutMs: number, concurrency: number): Dispatcher {
  const pool = {
    connections: concurrency,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 10_000,
  };
  if (trust.fingerprint)
    return new Agent({ ...pool, connect: pinnedConnector(trust.fingerprint, timeoutMs) });
  return new Agent({
    ...pool,
    connect: { timeout: timeoutMs, ...(trust.ca ? { ca: trust.ca } : {}) },
  });
}

/**
 * One collection's dispatcher and the signal that ends it. The signal aborts when the
 * source's deadline (`deadline`, from collect.ts) passes or when the collection ends
 * (`end`, for instance when one Proxmox node failed while another's requests are still
 * running): either way the dispatcher is destroyed at once, so every request still open
 * fails and none is started, rather than each running to its own deadline in the
 * background after the collection gave up on them.
 */
export interface AdapterSession {
  dispatcher: Dispatcher;
  signal: AbortSignal;
  /** Runs a request when one of the session's `concurrency` places is free. */
  queue: PQueue;
  /** Stops what is still running and closes the connection; call it when the collection ends. */
  end(): Promise<void>;
}

export function adapterSession(
  trust: TlsTrust,
  timeoutMs: number,
  deadline?: AbortSignal,
  concurrency = 1,
): AdapterSession {
  const ended = new AbortController();
  const signal = deadline ? AbortSignal.any([deadline, ended.signal]) : ended.signal;
  const dispatcher = adapterAgent(trust, timeoutMs, concurrency);
  let destroyed: Promise<void> | undefined;
  const destroy = () => {
    // destroy, not close: close would wait for the requests still open.
    destroyed ??= dispatcher.destroy().catch(() => undefined);
    return destroyed;
  };
  if (signal.aborted) void destroy();
  else signal.addEventListener('abort', destroy, { once: true });
  return {
    dispatcher,
    signal,
    // A request waiting for a place once the session is over starts, sees the signal and
    // fails at once (getText): nothing queued is left unsettled.
    queue: new PQueue({ concurrency }),
    end: () => {
      ended.abort(new AdapterError('the collection ended'));
      return destroy();
    },
  };
}

export interface GetOptions {
  dispatcher: Dispatcher;
  /** The deadline of this one request (connection and the whole answer). */
  timeoutMs: number;
  /** The collection's signal (AdapterSession): when it aborts, the request stops at once. */
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** The body of a 2xx answer as text; anything else is an AdapterError saying what happened. */
export async function getText(url: string, options: GetOptions): Promise<string> {
  const origin = new URL(url).origin;
  // No request is started once the collection is over.
  if (options.signal?.aborted) throw new AdapterError(`${origin}: ${STOPPED}`);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      dispatcher: options.dispatcher,
      headers: { accept: 'application/json', 'user-agent': 'advisory-appliance', ...options.headers },
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
    });
  } catch (error) {
    throw new AdapterError(`${origin}: ${describe(error, options)}`);
  }
  if (response.statusCode < 200 || response.statusCode > 299) {
    await response.body.dump();
    throw new AdapterError(`${url} answered HTTP ${response.statusCode}`, response.statusCode);
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
    throw new AdapterError(`${url}: ${describe(error, options)}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function getJson(url: string, options: GetOptions): Promise<unknown> {
  const text = await getText(url, options);
  try {
    return JSON.parse(text);
  } catch {
    throw new AdapterError(`${url}: the answer is not JSON`);
  }
}

function describe(error: unknown, options: GetOptions): string {
  // The collection's end destroys the dispatcher too, so its errors say nothing more.
  if (options.signal?.aborted) return STOPPED;
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError') return `timed out after ${options.timeoutMs} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.message ?? cause?.code ?? (error as Error).message;
}

/**
 * JSON from one API for one collection (the Proxmox and Nextcloud sources): the session's
 * connections, queue and signal, each request with its own deadline (`timeoutMs`, the
 * source's `request_timeout`), the source's credentials, and for the statuses that mean a
 * credential was refused, what the operator should fix, in an error naming the source.
 */
export function apiGetter(
  session: AdapterSession,
  request: {
    source: string;
    timeoutMs: number;
    headers: Record<string, string>;
    refused: Partial<Record<number, string>>;
  },
): (url: string) => Promise<unknown> {
  const options = {
    dispatcher: session.dispatcher,
    signal: session.signal,
    timeoutMs: request.timeoutMs,
    headers: request.headers,
  };
  const ask = async (url: string): Promise<unknown> => {
    try {
      return await getJson(url, options);
    } catch (error) {
      const why = error instanceof AdapterError ? request.refused[error.status ?? 0] : undefined;
      if (!why || !(error instanceof AdapterError)) throw error;
      throw new AdapterError(`${request.source}: ${url} answered HTTP ${error.status}: ${why}`, error.status);
    }
  };
  // The request's own deadline starts when it is sent, not while it waits for a place.
  return (url) => session.queue.add(() => ask(url), { throwOnTimeout: true });
}
