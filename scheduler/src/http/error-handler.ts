import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, errorCatalogue } from '../errors.ts';
import type { App } from './types.ts';
import { describeValidationError } from './validation.ts';

/**
 * 503 means "try again later works": the database cannot be reached or went away (a
 * socket to it failed, it is starting or shutting down, it has no connection to spare),
 * or a statement ran out of its time (statement or lock timeout). Nothing else is: an
 * error of the database that no retry mends (a statement it cannot take, 08P01
 * protocol_violation among them, though SQLSTATE class 08 is otherwise about
 * connections) is a bug, answered 500.
 */
const unavailableCodes = new Set([
  // Sockets to the database.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // Class 08, connection exceptions: no connection, or it failed.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
  // Class 53, insufficient resources: the disk full, memory or connections exhausted, a
  // configured limit reached. The server cannot take the statement now; once an operator
  // or the load frees the resource, the same request works.
  '53000',
  '53100',
  '53200',
  '53300',
  '53400',
  // lock_not_available (lock_timeout) and query_canceled (statement_timeout).
  '55P03',
  '57014',
  // admin_shutdown, crash_shutdown, cannot_connect_now.
  '57P01',
  '57P02',
  '57P03',
]);

/**
 * How pg, its pool, PGlite and Kysely report a connection that is closed or could not be
 * had in time, with a plain Error.
 */
const closedConnection = new RegExp(
  [
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Cannot use a pool after calling end on the pool',
    // A statement sent on a connection that died (the ROLLBACK of a transaction cut off),
    // and one the server did not answer within the client's deadline (query_timeout).
    'is not queryable',
    '^Query read timeout$',
    'PGlite is closed',
    'driver has already been destroyed',
  ].join('|'),
  'i',
);

function isUnavailable(error: { code?: unknown; message?: string }): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  return unavailableCodes.has(code) || closedConnection.test(error.message ?? '');
}

/**
 * The database refused a write for a rule a service should have named (an integrity
 * constraint, SQLSTATE class 23) or gave up on a transaction that met another one
 * (deadlock, serialization failure): a race no service foresaw. The client's request
 * conflicts with a change made at the same time, and may be tried again.
 */
function isConflict(error: { code?: unknown }): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  return /^23[0-9A-Z]{3}$/.test(code) || code === '40P01' || code === '40001';
}

/** Fixed texts for Fastify's own client errors, so internals never reach a response. */
function clientError(error: FastifyError): AppError | null {
  // Fastify reports an unparsable body as FST_ERR_CTP_*JSON*. Errors of other libraries may
  // carry a code that is not a string, and a SyntaxError from server code is a bug, not a body.
  const code: unknown = error.code;
  if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_') && code.includes('JSON')) {
    return new AppError('BAD_REQUEST', 'malformed JSON body');
  }
  const status = error.statusCode ?? 500;
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'request body too large');
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json');
  if (status === 404) return new AppError('NOT_FOUND', 'not found');
  if (status >= 400 && status < 500) return new AppError('BAD_REQUEST', 'bad request');
  return null;
}

/**
 * Answers refused before the body was read: the connection is closed afterwards, so a
 * client cannot keep it busy by trickling a body nobody will read.
 */
const closesConnection = new Set([401, 403, 413]);

export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
) {
  const status = errorCatalogue[code].status;
  if (closesConnection.has(status)) reply.header('connection', 'close');
  return reply
    .code(status)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .send({ error: { code, message } });
}

/** The one place where errors become HTTP responses. */
export function registerErrorHandling(app: App): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.warn({ code: error.code }, error.message);
      return sendError(reply, error.code, error.message, error.headers);
    }
    if (error.validation) {
      return sendError(reply, 'VALIDATION_FAILED', describeValidationError(error));
    }
    const mapped = clientError(error);
    if (mapped) return sendError(reply, mapped.code, mapped.message);
    if (isConflict(error)) {
      // A service should answer this itself (404 gone, 409 with its rule): logged as its bug.
      request.log.error({ err: error }, 'database refusal not handled by its service');
      return sendError(
        reply,
        'INVALID_STATE',
        'the request conflicts with a change made at the same time; reload and try again',
      );
    }
    if (isUnavailable(error)) {
      request.log.error({ err: error }, 'dependency unavailable');
      return sendError(reply, 'SERVICE_UNAVAILABLE', 'service temporarily unavailable');
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'INTERNAL', `internal error (request id ${request.id})`);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 'NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}
