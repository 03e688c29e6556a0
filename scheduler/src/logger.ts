import type { IncomingMessage } from 'node:http';
import pino, { type DestinationStream, type Logger, type SerializedError } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.ts';

export interface LoggerOptions {
  /** A person watches a terminal: readable lines instead of JSON. */
  interactive?: boolean;
  /** Where lines go (standard output unless a test captures them). */
  destination?: DestinationStream;
}

/** Query parameters whose values are secrets wherever they appear (tokens, signatures, keys). */
const secretParameter = /token|secret|password|passwd|signature|credential|api[_-]?key|^key$|^sig$|^code$/i;

/** Percent-escapes decoded byte by byte, a broken one left as it is: what a router may read. */
function looselyDecoded(path: string): string {
  return path.replace(/%([0-9a-f]{2})/gi, (_escape, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/**
 * A request target fit for a log line: a calendar feed's token (the path is the secret;
 * the database keeps only its hash) and the values of secret-looking query parameters
 * are replaced by `[redacted]`. The path is judged as decoded, so no spelling of a feed's
 * address (escaped letters, doubled or trailing slashes, a deeper path) keeps its token;
 * everything after `/cal/` goes.
 */
export function redactUrl(url: string): string {
  const [path = '', query] = url.split(/\?(.*)/s, 2);
  const decoded = looselyDecoded(path);
  const feed = decoded.search(/\/cal\//i);
  const safePath =
    feed === -1
      ? path
      : `${decoded.slice(0, feed)}/cal/[redacted]${/\.ics\/?$/i.test(decoded) ? '.ics' : ''}`;
  if (query === undefined) return safePath;
  const safeQuery = query
    .split('&')
    .map((pair) => {
      const [name = '', value] = pair.split(/=(.*)/s, 2);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {}
      return value !== undefined && secretParameter.test(decoded) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${safePath}?${safeQuery}`;
}

/** Fields database drivers attach to errors that may hold row values or statement parameters. */
const leakyErrorFields = [
  'params',
  'parameters',
  'query',
  'queryOptions',
  'detail',
  'where',
  'internalQuery',
];

function serializeError(error: unknown): SerializedError | unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (!serialized || typeof serialized !== 'object') return serialized;
  const scrub = (value: Record<string, unknown>) => {
    for (const field of leakyErrorFields) delete value[field];
    for (const nested of ['cause', 'aggregateErrors']) {
      const inner = value[nested];
      if (Array.isArray(inner)) for (const item of inner) if (item && typeof item === 'object') scrub(item);
      if (inner && typeof inner === 'object' && !Array.isArray(inner))
        scrub(inner as Record<string, unknown>);
    }
  };
  scrub(serialized);
  return serialized;
}

/** Fastify's request fields, with the target redacted. */
function serializeRequest(request: IncomingMessage & { ip?: string; host?: string }) {
  return {
    method: request.method,
    url: redactUrl(request.url ?? ''),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/**
 * The process logger: one JSON object per line for log collectors, or pino-pretty's
 * readable lines when standard output is a terminal. Secrets stay out of every line: the
 * request log's target is redacted (redactUrl), errors lose the driver fields that carry
 * row values and statement parameters, and credential headers are censored wherever a
 * line carries headers.
 */
export function createLogger(level: Config['logLevel'], options: LoggerOptions = {}): Logger {
  const interactive = options.interactive ?? process.stdout.isTTY === true;
  const settings = {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-api-key"]',
        'headers.authorization',
        'headers.cookie',
        'headers["x-api-key"]',
      ],
      censor: '[redacted]',
    },
    serializers: { req: serializeRequest, err: serializeError },
  };
  if (interactive) {
    return pino(
      settings,
      pretty({
        colorize: options.destination === undefined,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
        ...(options.destination ? { destination: options.destination } : {}),
        sync: true,
      }),
    );
  }
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
