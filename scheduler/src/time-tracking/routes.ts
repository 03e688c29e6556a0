import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, bodyCodes, errorResponses, IdParams, ok, pathIdCodes } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import {
  exampleBalance,
  exampleLedger,
  examplePayout,
  exampleTimeEntry,
  LedgerRow,
  OvertimeBalance,
  PayoutRecord,
  PayoutRequest,
  RecordTimeRequest,
  TimeEntry,
} from './schemas.ts';
import {
  getBalance,
  getBalances,
  getLedger,
  getOwnBalance,
  getOwnPayouts,
  getPayouts,
  recordPayout,
  recordTime,
} from './service.ts';

const gated =
  'While the tenant has time tracking switched off, every caller gets 404 here, before any role check.';
const UserParams = Type.Object({ user_id: IdParams.properties.id });
const userMissing = errorResponses(pathIdCodes, {
  messages: { NOT_FOUND: 'user not found' },
});
const gateOnly = errorResponses(['NOT_FOUND'], { messages: { NOT_FOUND: 'resource not found' } });

/** The time-tracking surface; every route is behind the tenant's `time_tracking_enabled`. */
export async function timeTrackingRoutes(app: App, deps: Deps): Promise<void> {
  const member = { access: 'member', feature: 'time_tracking' } as const;
  const admin = { access: 'admin', feature: 'time_tracking' } as const;

  app.get(
    '/api/v1/time-tracking/balance',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'getMyOvertimeBalance',
        summary: 'Your own overtime balance',
        description: `The caller's balance in minutes; 0 with no activity. ${gated}`,
        security: bearerSecurity,
        response: { 200: ok(OvertimeBalance, 'The caller’s balance', exampleBalance), ...gateOnly },
      },
    },
    async (request) => getOwnBalance(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/time-tracking/balances',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'listOvertimeBalances',
        summary: 'Every admin and employee with their balance',
        description: `Admins only. Everyone on the staff, by display name, 0 for those without activity. ${gated}`,
        security: bearerSecurity,
        response: { 200: ok(Type.Array(OvertimeBalance), 'The balances', [exampleBalance]), ...gateOnly },
      },
    },
    async (request) => getBalances(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/time-tracking/balance/:user_id',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'getOvertimeBalance',
        summary: 'One user’s balance',
        description: `Admins only. 0 for a user without activity; 404 for no such admin or employee. ${gated}`,
        security: bearerSecurity,
        params: UserParams,
        response: { 200: ok(OvertimeBalance, 'The balance', exampleBalance), ...userMissing },
      },
    },
    async (request) => getBalance(deps, identityOf(request), pathId(request.params.user_id, 'user')),
  );

  app.post(
    '/api/v1/time-tracking/entries',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'recordTime',
        summary: 'Record the time worked on an assignment (idempotent per assignment)',
        description: `Admins only. Overtime = worked minutes (whole elapsed minutes from started_at to ended_at, across midnight and daylight-saving changes as they passed, minus the break) - the shift's scheduled minutes; it may be negative. The entry and the balance change in one statement. One entry per assignment: the first post creates it (201); a re-post with the same times returns it (200); one with other times rewrites it (200) and moves the balance by the difference only, also under concurrent posts. Every change is a row of the user's ledger. ${gated}`,
        security: bearerSecurity,
        body: RecordTimeRequest,
        response: {
          201: ok(TimeEntry, 'The entry, created', exampleTimeEntry),
          200: ok(TimeEntry, 'The entry as it stands after a re-post', exampleTimeEntry),
          ...errorResponses([...bodyCodes, 'NOT_FOUND'], {
            messages: {
              NOT_FOUND: 'shift assignment not found',
              VALIDATION_FAILED: 'break_minutes: must not be longer than the 300 minutes worked',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const { entry, created } = await recordTime(deps, identityOf(request), request.body);
      return reply.code(created ? 201 : 200).send(entry);
    },
  );

  app.post(
    '/api/v1/time-tracking/payouts',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'recordPayout',
        summary: 'Pay out overtime minutes',
        description: `Admins only. More than 0 minutes and at most the balance (409 INSUFFICIENT_BALANCE otherwise); the balance row is locked while it changes, so concurrent payouts never take it below zero. The record keeps who paid, when and the note. ${gated}`,
        security: bearerSecurity,
        body: PayoutRequest,
        response: {
          201: ok(PayoutRecord, 'The payout', examplePayout),
          ...errorResponses([...bodyCodes, 'NOT_FOUND', 'INSUFFICIENT_BALANCE'], {
            messages: {
              NOT_FOUND: 'user not found',
              INSUFFICIENT_BALANCE: 'the balance is 90 minutes; cannot pay out 120',
            },
          }),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await recordPayout(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/time-tracking/payouts/me',
    {
      config: member,
      schema: {
        tags: ['time tracking'],
        operationId: 'listMyPayouts',
        summary: 'Your own payouts, newest first',
        description: `The caller's payouts, newest first. ${gated}`,
        security: bearerSecurity,
        response: { 200: ok(Type.Array(PayoutRecord), 'The caller’s payouts', [examplePayout]), ...gateOnly },
      },
    },
    async (request) => getOwnPayouts(deps, identityOf(request)),
  );

  app.get(
    '/api/v1/time-tracking/payouts/:user_id',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'listPayouts',
        summary: 'One user’s payouts, newest first',
        description: `Admins only. 404 for no such admin or employee. ${gated}`,
        security: bearerSecurity,
        params: UserParams,
        response: { 200: ok(Type.Array(PayoutRecord), 'The payouts', [examplePayout]), ...userMissing },
      },
    },
    async (request) => getPayouts(deps, identityOf(request), pathId(request.params.user_id, 'user')),
  );

  app.get(
    '/api/v1/time-tracking/ledger/:user_id',
    {
      config: admin,
      schema: {
        tags: ['time tracking'],
        operationId: 'getOvertimeLedger',
        summary: 'Every change of one user’s balance, oldest first',
        description: `Admins only. The append-only rows the balance is the sum of: entry (an entry's overtime when first recorded), correction (the difference when an entry is rewritten), payout (minus the minutes paid). The database writes them with the change itself and never alters them, so the balance always equals the sum of delta_minutes. ${gated}`,
        security: bearerSecurity,
        params: UserParams,
        response: {
          200: ok(Type.Array(LedgerRow), 'The ledger rows, oldest first', exampleLedger),
          ...userMissing,
        },
      },
    },
    async (request) => getLedger(deps, identityOf(request), pathId(request.params.user_id, 'user')),
  );
}
