import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import {
  bearerSecurity,
  bodyCodes,
  DecisionRequest,
  errorResponses,
  IdParams,
  NoBody,
  noContent,
  ok,
  pathIdCodes,
} from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import {
  exampleTimeOff,
  MAX_OPEN_TIME_OFF,
  MAX_TIME_OFF_DAYS,
  TimeOff,
  TimeOffListQuery,
  TimeOffRequest,
} from './schemas.ts';
import { decide, getTimeOff, removeTimeOff, requestTimeOff } from './service.ts';

/** A deciding admin and moment, for the examples. */
const examples = {
  admin: '3f2504e04f8941d39a0c0305e82c3302',
  decidedAt: '2026-11-03T09:00:00.000Z',
};

const overlapMessage =
  'the time off overlaps assignments of the user: 0193a1b2c3d47e8f9a0b1c2d3e4f5a73 (shift "Bar", 0193a1b2c3d47e8f9a0b1c2d3e4f5a71)';
const approved = { ...exampleTimeOff, status: 'approved' as const };

/** What a decision's body does, for both decisions. */
const reasonRule =
  'The body is optional: none, {} or null decide without a reason; { "reason": "..." } (one line, 1 to 500 characters, trimmed; blank, longer, a line break or any other field is 422 naming it) is stored with the decision and returned as decision_reason, which the requester reads on their time off (GET /time-off).';
const reasonMessage = 'reason: must be one line of text, without control characters';

/** Time off: the staff's own requests, and the admins' decisions. */
export async function timeOffRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/me/time-off',
    {
      config: { access: 'member' },
      schema: {
        tags: ['time off'],
        operationId: 'requestTimeOff',
        summary: 'Ask for time off for yourself',
        description: `Admins and employees, for themselves. ends_at after starts_at, at most ${MAX_TIME_OFF_DAYS} days later (422 otherwise). It must not overlap a requested or approved time off of the caller (409 DUPLICATE naming it; rejected ones block nothing), and the caller holds at most ${MAX_OPEN_TIME_OFF} open time off, requested or approved and not over (409 INVALID_STATE beyond). The answer is requested, for an admin to decide; or approved at once when the tenant's time_off_needs_approval is off, and then it must not overlap an assignment of the caller (409 OVERLAPPING_ASSIGNMENT naming them as the approve route does; nothing is stored). An employee's message names only the assignments in shifts they may see and counts the others ("and 2 assignments you cannot see").`,
        security: bearerSecurity,
        body: TimeOffRequest,
        response: {
          201: ok(TimeOff, 'The time off, requested or approved', exampleTimeOff),
          ...errorResponses([...bodyCodes, 'OVERLAPPING_ASSIGNMENT', 'DUPLICATE', 'INVALID_STATE'], {
            messages: {
              VALIDATION_FAILED: 'ends_at: must be after starts_at',
              OVERLAPPING_ASSIGNMENT: overlapMessage,
              DUPLICATE: `the time off overlaps time off of the user: ${exampleTimeOff.id} (requested)`,
              INVALID_STATE: `the user has ${MAX_OPEN_TIME_OFF} open time off (requested, or approved and not over); remove one or wait for a decision`,
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await requestTimeOff(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/time-off',
    {
      config: { access: 'member' },
      schema: {
        tags: ['time off'],
        operationId: 'listTimeOff',
        summary: 'Time off, by start, a page at a time',
        description:
          'Admins read every time off of the tenant, or one admin’s or employee’s with user_id (404 for anyone else); employees read their own, and naming another user_id is 403. status keeps one status; from and to keep the time off whose span [starts_at, ends_at) overlaps [from, to), either may be left out; to at or before from is 422. Pages: at most limit (100 by default); pass the id of the last one as after for the next page; a shorter page is the last.',
        security: bearerSecurity,
        querystring: TimeOffListQuery,
        response: {
          200: ok(Type.Array(TimeOff), 'The time off, earliest start first', [exampleTimeOff]),
          ...errorResponses(['NOT_FOUND', 'VALIDATION_FAILED'], {
            messages: { NOT_FOUND: 'user not found', VALIDATION_FAILED: 'to: must be after from' },
          }),
        },
      },
    },
    async (request) => getTimeOff(deps, identityOf(request), request.query),
  );

  app.post(
    '/api/v1/time-off/:id/approve',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['time off'],
        operationId: 'approveTimeOff',
        summary: 'Approve requested time off',
        description: `Admins only. Only a requested time off (409 INVALID_STATE otherwise). Approved time off blocks every claim, assignment and offer of a shift overlapping it (409 UNAVAILABLE there). When it overlaps assignments of the user, the answer is 409 OVERLAPPING_ASSIGNMENT naming them (the first 10, with their shifts) and nothing changes: remove them first, nothing is removed for you. The database holds the rule under concurrent claims too. ${reasonRule}`,
        security: bearerSecurity,
        params: IdParams,
        body: DecisionRequest,
        response: {
          200: ok(TimeOff, 'The time off, approved', {
            ...approved,
            decided_by: examples.admin,
            decided_at: examples.decidedAt,
          }),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'INVALID_STATE', 'OVERLAPPING_ASSIGNMENT'], {
            messages: {
              NOT_FOUND: 'time off not found',
              VALIDATION_FAILED: reasonMessage,
              INVALID_STATE: 'the time off is rejected; only a requested one can be decided',
              OVERLAPPING_ASSIGNMENT: overlapMessage,
            },
          }),
        },
      },
    },
    async (request) =>
      decide(deps, identityOf(request), pathId(request.params.id, 'time off'), 'approved', request.body),
  );

  app.post(
    '/api/v1/time-off/:id/reject',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['time off'],
        operationId: 'rejectTimeOff',
        summary: 'Reject requested time off',
        description: `Admins only. Only a requested time off (409 INVALID_STATE otherwise). ${reasonRule}`,
        security: bearerSecurity,
        params: IdParams,
        body: DecisionRequest,
        response: {
          200: ok(TimeOff, 'The time off, rejected', {
            ...exampleTimeOff,
            status: 'rejected',
            decided_by: examples.admin,
            decided_at: examples.decidedAt,
            decision_reason: 'Two bartenders are away that week already',
          }),
          ...errorResponses([...pathIdCodes, ...bodyCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'time off not found',
              VALIDATION_FAILED: reasonMessage,
              INVALID_STATE: 'the time off is approved; only a requested one can be decided',
            },
          }),
        },
      },
    },
    async (request) =>
      decide(deps, identityOf(request), pathId(request.params.id, 'time off'), 'rejected', request.body),
  );

  app.delete(
    '/api/v1/time-off/:id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['time off'],
        operationId: 'deleteTimeOff',
        summary: 'Remove time off (admin: any; employee: an own request)',
        description:
          'Admins remove any time off of the tenant, approved ones too. An employee removes their own while it is requested; a decided one is 409 INVALID_STATE, and anyone else’s is 404.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('The time off is gone'),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'time off not found',
              INVALID_STATE: 'the time off is approved; ask an admin to remove it',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      await removeTimeOff(deps, identityOf(request), pathId(request.params.id, 'time off'));
      return reply.code(204).send(null);
    },
  );
}
