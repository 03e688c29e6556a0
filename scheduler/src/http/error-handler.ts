import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, errorCatalogue } from '../errors.ts';
import type { App } from './types.ts';
import { describeValidationError } from './validation.ts';

/** Database and socket failures that mean "try again later" rather than "bug". */
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  // A statement past DATABASE_STATEMENT_TIMEOUT_MS, cancelled by the server.
  '57014',
  '57P01',
  '57P02',
  '57P03',
]);

function isUnavailable(error: { code?: unknown; message?: string }): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  if (unavailableCodes.has(code) || code.startsWith('08')) return true;
  // pg's pool and PGlite report a closed connection with a plain Error, pg also a statement
  // sent on one (the ROLLBACK of a transaction whose connection died, which Kysely reports),
  // a statement the server did not answer in time (query_timeout) and a pool that had no
  // connection to lend in time.
  return /Connection terminated|PGlite is closed|driver has already been destroyed|is not queryable$|^Query read timeout$|^timeout exceeded when trying to connect$/i.test(
    error.message ?? '',
  );
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
