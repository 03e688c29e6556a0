import { type Static, type TObjectOptions, type TProperties, type TSchema, Type } from 'typebox';
import { type ErrorCode, errorCatalogue } from '../errors.ts';
import { multiLinePattern, oneLinePattern } from '../input/text.ts';

type StringOptions = Parameters<typeof Type.String>[0];

/** The title that marks the body schema of actions that take none (see NoBody). */
export const NO_BODY_TITLE = 'NoBody';

/** Text shown as one line (names, titles, labels, address parts): no line breaks or control characters. */
export const OneLine = (options: StringOptions = {}) => Type.String({ ...options, pattern: oneLinePattern });
/** Free text (descriptions, notes): line breaks and tabs, no other control characters. */
export const MultiLine = (options: StringOptions = {}) =>
  Type.String({ ...options, pattern: multiLinePattern });

/** Wire id: a UUID as 32 lowercase hex digits. */
export const Id = Type.String({ pattern: '^[0-9a-f]{32}$', description: 'UUID as 32 lowercase hex digits' });
/**
 * An id in a query string: 32 hex digits or hyphenated, either case (the forms ids.ts
 * `queryId` reads; anything else is 422).
 */
export const IdQuery = (description: string, example: string) =>
  Type.String({
    pattern:
      '^([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$',
    description: `${description}; UUID, 32 hex digits or hyphenated`,
    examples: [example],
  });

/** RFC 3339 timestamp in UTC with `Z`. */
export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });

/** Fields the server sets: shown in responses, ignored or refused in requests. */
export const ReadOnlyId = Type.String({ ...Id, readOnly: true });
export const ReadOnlyTimestamp = Type.String({ ...Timestamp, readOnly: true });

/** A time a client sends: an offset up to ±15:59, stored in UTC (the strict reading of time/instant.ts). */
export const Instant = (description: string) =>
  Type.String({
    format: 'date-time',
    description: `${description}; RFC 3339 with an offset up to ±15:59, stored in UTC`,
  });

/**
 * One end of a time filter in a query string: an instant (RFC 3339, offset up to ±15:59,
 * a `+` sent as `%2B`) or a calendar date `YYYY-MM-DD`, which means the first instant of
 * that day in the tenant's time zone (time/window.ts `windowInZone`).
 */
export const WindowBound = (description: string, example: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.String({ format: 'date' })], {
    description: `${description}; RFC 3339 with an offset up to ±15:59 (write + as %2B), or a date YYYY-MM-DD: that day's 00:00 in the tenant time zone`,
    examples: [example],
  });

/**
 * The `from` and `to` query parameters of the lists filtered by time: records whose
 * window overlaps `[from, to)`, either end left open when absent; `to` at or before
 * `from`, to the microsecond, is 422 (time/window.ts). Either end may be a calendar date,
 * the start of that day in the tenant's time zone: `from=2026-12-01&to=2026-12-02` is 1
 * December there.
 */
export const WindowQuery = {
  from: Type.Optional(WindowBound('Only records that end after this instant', '2027-07-01')),
  to: Type.Optional(
    WindowBound('Only records that start before this instant; after from', '2027-07-08T00:00:00Z'),
  ),
};

/**
 * `T | null`. For a primitive this is `type: [T, "null"]` rather than `anyOf`: same
 * meaning in JSON Schema and OpenAPI 3.1, and the response serializer handles it
 * without trying each branch of an `anyOf` per value.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Union([schema, Type.Null()]);
}

/**
 * The body of a partial update (PATCH): fields left out keep their values, and at least
 * one must be sent, so `{}` is 422 (`body: must NOT have fewer than 1 properties`) on
 * every such route, as is a field the record does not have. A PATCH that replaces the
 * whole record (tenant settings, a slot's capacity) requires its fields instead, which
 * refuses `{}` as well. Every PATCH body is one of the two (test/http/body-matrix.test.ts).
 */
export function PartialUpdate<T extends TProperties>(
  properties: T,
  options: TObjectOptions & { title: string },
) {
  return Type.Object(properties, { ...options, additionalProperties: false, minProperties: 1 });
}

/**
 * The body of an action that takes none (publish, approve, accept, read-all, delete):
 * no body at all, an empty one, `{}` or `null` is the same request; any field is 422
 * naming it (`force: is not an allowed field`), so a client never believes a field it
 * sent did something. Fastify validates an absent body as null. The OpenAPI document
 * leaves these operations without a request body (docs/openapi.ts), since none is taken.
 */
export const NoBody = Type.Unsafe<Record<string, never> | null>({
  title: NO_BODY_TITLE,
  type: ['object', 'null'],
  properties: {},
  additionalProperties: false,
  description: 'This action takes no body: send none, or {}; any field is 422',
});

/** The title of the optional body of an admin's decision (see DecisionRequest). */
export const DECISION_REQUEST_TITLE = 'DecisionRequest';
/** The longest reason an admin gives for a decision, in characters (migration 0029 holds it too). */
export const MAX_DECISION_REASON_LENGTH = 500;

/**
 * The body of an admin's decision (approve, reject): as NoBody, none, an empty one, `{}`
 * or `null` is the decision as it always was; or `{ "reason": "..." }`, one line of 1 to
 * 500 characters, trimmed (blank is 422), stored with the decision as `decision_reason`
 * and shown to the people it concerns. Any other field is 422 naming it. The OpenAPI
 * document marks the body optional (docs/openapi.ts).
 */
export const DecisionRequest = Type.Unsafe<{ reason?: string } | null>({
  title: DECISION_REQUEST_TITLE,
  type: ['object', 'null'],
  properties: {
    reason: OneLine({
      minLength: 1,
      maxLength: MAX_DECISION_REASON_LENGTH,
      description: `Why: one line, at most ${MAX_DECISION_REASON_LENGTH} characters, trimmed; shown to the people the decision concerns`,
      examples: ['Two bartenders are away that week already'],
    }),
  },
  additionalProperties: false,
  description: 'Optional: send none, {}, or a reason; any other field is 422',
  examples: [{ reason: 'Two bartenders are away that week already' }],
});
export type DecisionRequest = { reason?: string } | null;

/** Path ids are parsed by the handler (a malformed id is 404, not 422). */
export const IdParams = Type.Object({
  id: Type.String({
    description: 'UUID, 32 hex digits or hyphenated',
    maxLength: 100,
    examples: ['0193a1b2c3d47e8f9a0b1c2d3e4f5a6b'],
  }),
});

/** The one error shape; `title` makes it the shared `Error` component of the OpenAPI document. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({
        enum: Object.keys(errorCatalogue),
        description: 'Stable; see the error catalogue',
      }),
      message: Type.String({ description: 'For people; may be reworded' }),
    }),
  },
  { title: 'Error', description: 'Every error response has this shape' },
);

/** The header of every 429: when the refused request may work again. */
const RetryAfter = Type.Integer({
  minimum: 1,
  description: 'Whole seconds until the request may be let through again',
  examples: [1],
});

/** A typical message per code, for the document's examples. */
const exampleMessages: Partial<Record<ErrorCode, string>> = {
  BAD_REQUEST: 'malformed JSON body',
  UNAUTHORIZED: 'invalid token',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not found',
  PAYLOAD_TOO_LARGE: 'request body too large',
  URI_TOO_LONG: 'a path parameter is too long',
  UNSUPPORTED_MEDIA_TYPE: 'request body must be application/json',
  VALIDATION_FAILED: 'name: is required',
  RATE_LIMITED: 'too many requests for this user; try again in 1 s',
  INVALID_STATE: 'role is required by shift slots; remove those slots first',
  DUPLICATE: 'a role named "Medic" already exists',
  INTERNAL: 'internal error (request id 0190f3a2c5a87c3e9b1d2f4a6c8e0b13)',
  SERVICE_UNAVAILABLE: 'service temporarily unavailable',
};

export interface MediaResponse {
  description: string;
  /** Response headers the document declares (Retry-After of a 429). */
  headers?: Record<string, TSchema>;
  content: { 'application/json': { schema: TSchema; example?: unknown; examples?: Record<string, unknown> } };
}

/** A success answer with a real description and an example, for validation and the document alike. */
export function ok<T extends TSchema>(schema: T, description: string, example: Static<T>) {
  return { description, content: { 'application/json': { schema, example } } };
}

/** 204 No Content. */
export const noContent = (description: string) => Type.Null({ description });

/** Codes every authenticated route can produce: token, role, and the server's own trouble. */
const authenticatedCodes: ErrorCode[] = ['UNAUTHORIZED', 'FORBIDDEN', 'INTERNAL', 'SERVICE_UNAVAILABLE'];
/** Codes of reading and validating a JSON body. */
export const bodyCodes: ErrorCode[] = [
  'BAD_REQUEST',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_FAILED',
];
/** Codes of a path id: malformed, too long or not in the caller's tenant. */
export const pathIdCodes: ErrorCode[] = ['NOT_FOUND', 'URI_TOO_LONG'];

/**
 * The error responses of a route: exactly the codes it can produce, grouped by status,
 * each status described by its codes and illustrated with one example per code.
 */
export function errorResponses(
  codes: ErrorCode[],
  options: { authenticated?: boolean; messages?: Partial<Record<ErrorCode, string>> } = {},
) {
  const all = new Set<ErrorCode>([...(options.authenticated === false ? [] : authenticatedCodes), ...codes]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  // Integer keys enumerate in ascending order: the statuses come out sorted.
  const responses: Record<number, MediaResponse> = {};
  for (const [status, list] of byStatus) {
    responses[status] = {
      description: list.map((code) => `${code}: ${errorCatalogue[code].summary}`).join(' '),
      ...(status === 429 ? { headers: { 'Retry-After': RetryAfter } } : {}),
      content: {
        'application/json': {
          schema: ErrorBody,
          examples: Object.fromEntries(
            list.map((code) => [
              code,
              {
                summary: errorCatalogue[code].summary,
                value: {
                  error: {
                    code,
                    message: options.messages?.[code] ?? exampleMessages[code] ?? code.toLowerCase(),
                  },
                },
              },
            ]),
          ),
        },
      },
    };
  }
  return responses;
}

export const bearerSecurity = [{ bearerAuth: [] }];

/** Example ids and times used across the document. */
export const examples = {
  tenantId: '0190f3a2c5a87c3e9b1d2f4a6c8e0b13',
  userId: '3f2504e04f8941d39a0c0305e82c3301',
  roleId: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6b',
  locationId: '0193a1b2c3d47e8f9a0b1c2d3e4f5a6c',
  eventId: '0193a1b2c3d47e8f9a0b1c2d3e4f5a70',
  shiftId: '0193a1b2c3d47e8f9a0b1c2d3e4f5a71',
  slotId: '0193a1b2c3d47e8f9a0b1c2d3e4f5a72',
  assignmentId: '0193a1b2c3d47e8f9a0b1c2d3e4f5a73',
  createdAt: '2026-11-02T09:30:00.000Z',
} as const;
