/**
 * The error catalogue. Domain code throws `AppError` values carrying a stable code;
 * `http/error-handler.ts` is the one place that turns them into HTTP responses.
 * Every code is documented in docs/scheduler/errors.md (a test keeps the two in step).
 */
export const errorCatalogue = {
  BAD_REQUEST: {
    status: 400,
    summary: 'The request could not be read (malformed JSON, wrong content type).',
  },
  UNAUTHORIZED: { status: 401, summary: 'Bearer token missing or invalid.' },
  FORBIDDEN: {
    status: 403,
    summary:
      'The caller may not use this route: a role too low, or a deactivated user. The message is always "forbidden"; the reason is in the server log under the request id.',
  },
  NOT_FOUND: { status: 404, summary: 'No such resource in the caller tenant (or a disabled feature).' },
  REQUEST_TIMEOUT: {
    status: 408,
    summary: 'The request (headers and body) did not arrive within REQUEST_TIMEOUT_MS.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, summary: 'Request body above BODY_LIMIT_BYTES.' },
  URI_TOO_LONG: { status: 414, summary: 'A path parameter is longer than the API accepts.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, summary: 'Request body is not application/json.' },
  VALIDATION_FAILED: { status: 422, summary: 'The input breaks a rule; the message names the field.' },
  SLOT_FULL: { status: 409, summary: 'The slot is at capacity.' },
  ALREADY_ASSIGNED: { status: 409, summary: 'The user already holds a slot in this shift.' },
  NOT_QUALIFIED: { status: 409, summary: 'The user does not hold the role the slot needs.' },
  OVERLAPPING_ASSIGNMENT: { status: 409, summary: 'The user is assigned to an overlapping shift.' },
  UNAVAILABLE: { status: 409, summary: 'The user has approved time off that overlaps the shift.' },
  INVALID_STATE: { status: 409, summary: 'The record is not in a state that allows this operation.' },
  DUPLICATE: { status: 409, summary: 'A record with this unique value already exists.' },
  INSUFFICIENT_BALANCE: { status: 409, summary: 'The payout exceeds the overtime balance.' },
  SHIFT_NOT_ENDED: {
    status: 409,
    summary: 'Time is recorded for a shift once it has ended, unless the tenant allows it before.',
  },
  OUTSIDE_CLOCK_WINDOW: {
    status: 409,
    summary:
      'A seat is clocked from 1 hour before its shift starts until the end of the day (tenant time zone) it ends on.',
  },
  RATE_LIMITED: { status: 429, summary: 'Too many requests; see the Retry-After header.' },
  HEADERS_TOO_LARGE: { status: 431, summary: 'The request headers exceed the server limit (16 KiB).' },
  INTERNAL: {
    status: 500,
    summary: 'Unexpected failure; details are in the server log under the request id.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    summary:
      'A dependency (database, storage) is unavailable or not configured, or a statement ran out of its time; trying again later can work.',
  },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
    /** Why, for the server log only (http/access-hook.ts logs it): never in the response. */
    readonly reason?: string,
  ) {
    // An AppError is an answer, not a fault: nobody reads its stack, and capturing one is
    // most of what it costs (a claim storm refuses nine claims in ten).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

export const notFound = (what = 'resource'): AppError => new AppError('NOT_FOUND', `${what} not found`);
/**
 * Every 403 is the same, so a response never tells why access was refused; a reason
 * given goes to the request's log line.
 */
export const forbidden = (reason?: string): AppError => new AppError('FORBIDDEN', 'forbidden', {}, reason);
/** A deactivated user's tokens: every route refuses them with the fixed 403, the log says why. */
export const deactivated = (): AppError => forbidden('user is deactivated');
export const validationFailed = (field: string, problem: string): AppError =>
  new AppError('VALIDATION_FAILED', `${field}: ${problem}`);
/** 401 without a token: the RFC 6750 challenge carries no error code. */
export const missingToken = (): AppError =>
  new AppError('UNAUTHORIZED', 'missing bearer token', { 'www-authenticate': 'Bearer' });

/**
 * 401 for a token that does not verify. The body is the contract's fixed text; the reason
 * goes into the RFC 6750 challenge, where a client developer looks for it.
 */
export function invalidToken(reason: string): AppError {
  const description = reason.replace(/["\\]/g, "'");
  return new AppError('UNAUTHORIZED', 'invalid token', {
    'www-authenticate': `Bearer error="invalid_token", error_description="${description}"`,
  });
}
