import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import type { ErrorCode } from '../errors.ts';
import {
  bearerSecurity,
  bodyCodes,
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
  AssignRequest,
  exampleAssignment,
  exampleMyAssignment,
  exampleShiftColleague,
  MyAssignment,
  MyAssignmentsQuery,
  ShiftAssignment,
  ShiftColleague,
} from './schemas.ts';
import {
  assignSlot,
  claimSlot,
  getMyAssignments,
  getShiftAssignments,
  getShiftColleagues,
  getUserAssignments,
  unassign,
} from './service.ts';

const PathId = IdParams.properties.id;
const SlotParams = Type.Object({ shift_id: PathId, slot_id: PathId });
const AssignmentParams = Type.Object({ shift_id: PathId, assignment_id: PathId });

const seatCodes: ErrorCode[] = [
  ...pathIdCodes,
  'SLOT_FULL',
  'ALREADY_ASSIGNED',
  'NOT_QUALIFIED',
  'OVERLAPPING_ASSIGNMENT',
  'UNAVAILABLE',
  'INVALID_STATE',
];
const seatMessages = {
  NOT_FOUND: 'slot not found',
  SLOT_FULL: 'the slot is full',
  ALREADY_ASSIGNED: 'the user already holds a seat in this shift',
  NOT_QUALIFIED: 'the user does not hold the role this slot needs',
  OVERLAPPING_ASSIGNMENT: 'the user is assigned to an overlapping shift',
  UNAVAILABLE: 'the user has approved time off then',
  INVALID_STATE: 'shift has ended',
};

export async function assignmentsRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/shifts/:shift_id/slots/:slot_id/claim',
    {
      config: { access: 'member' },
      schema: {
        tags: ['assignments'],
        operationId: 'claimSlot',
        summary: 'Take a seat in a slot yourself',
        description:
          'The caller takes a seat when the shift is published, its event is published and it has not ended; the caller holds the slot role; the slot has a free seat; the caller holds no seat in this shift and no assignment overlapping it, and has no approved time off overlapping it (409 UNAVAILABLE). Each refusal has its own 409 code. Capacity holds under any number of concurrent claims.',
        security: bearerSecurity,
        params: SlotParams,
        body: NoBody,
        response: {
          201: ok(ShiftAssignment, 'The seat taken', exampleAssignment),
          ...errorResponses(seatCodes, { messages: seatMessages }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await claimSlot(
            deps,
            identityOf(request),
            pathId(request.params.shift_id, 'shift'),
            pathId(request.params.slot_id, 'slot'),
          ),
        ),
  );

  app.post(
    '/api/v1/shifts/:shift_id/slots/:slot_id/assign',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['assignments'],
        operationId: 'assignSlot',
        summary: 'Place an admin or employee on a slot',
        description:
          'Admins only. The rules of a claim hold (role, capacity, one seat per shift, no overlap, no approved time off of the user then), except that draft and ended shifts may be staffed too (planning ahead, recording who stood in).',
        security: bearerSecurity,
        params: SlotParams,
        body: AssignRequest,
        response: {
          201: ok(ShiftAssignment, 'The assignment', { ...exampleAssignment, source: 'assign' }),
          ...errorResponses([...seatCodes, ...bodyCodes], { messages: seatMessages }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await assignSlot(
            deps,
            identityOf(request),
            pathId(request.params.shift_id, 'shift'),
            pathId(request.params.slot_id, 'slot'),
            request.body,
          ),
        ),
  );

  app.get(
    '/api/v1/shifts/:shift_id/assignments',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['assignments'],
        operationId: 'listShiftAssignments',
        summary: 'Who is on a shift',
        description: 'Admins only. The assignments of the shift, oldest first.',
        security: bearerSecurity,
        params: Type.Object({ shift_id: PathId }),
        response: {
          200: ok(Type.Array(ShiftAssignment), 'The assignments of the shift', [exampleAssignment]),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'shift not found' } }),
        },
      },
    },
    async (request) =>
      getShiftAssignments(deps, identityOf(request), pathId(request.params.shift_id, 'shift')),
  );

  app.get(
    '/api/v1/shifts/:shift_id/colleagues',
    {
      config: { access: 'member' },
      schema: {
        tags: ['assignments'],
        operationId: 'listShiftColleagues',
        summary: 'Who else is on a shift, by name and role',
        description:
          'The people holding a seat in the shift, the caller left out, each with their display name (null when they have none) and the role of their slot; by name, then id. Admins read it for any shift. An employee reads it for a shift they hold a seat in, while the tenant setting shift_colleagues_visible is on (GET /tenant/settings tells the app); otherwise 403. A shift the employee may not see, or another tenant’s, is 404.',
        security: bearerSecurity,
        params: Type.Object({ shift_id: PathId }),
        response: {
          200: ok(Type.Array(ShiftColleague), 'The others on the shift', [exampleShiftColleague]),
          ...errorResponses(pathIdCodes, { messages: { NOT_FOUND: 'shift not found' } }),
        },
      },
    },
    async (request) =>
      getShiftColleagues(deps, identityOf(request), pathId(request.params.shift_id, 'shift')),
  );

  app.delete(
    '/api/v1/shifts/:shift_id/assignments/:assignment_id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['assignments'],
        operationId: 'deleteAssignment',
        summary: 'Free a seat (admin: any; employee: an own claim before the shift starts)',
        description:
          'Admins remove any assignment. An employee withdraws a seat they claimed, before the shift starts; a seat an admin gave them, or a started shift, is 409 INVALID_STATE, and anyone else’s assignment is 404. An assignment with recorded time is never removed (409). The freed seat makes the shift claimable again.',
        security: bearerSecurity,
        params: AssignmentParams,
        body: NoBody,
        response: {
          204: noContent('The seat is free again'),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], {
            messages: {
              NOT_FOUND: 'assignment not found',
              INVALID_STATE: 'the shift has started; ask an admin',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      await unassign(
        deps,
        identityOf(request),
        pathId(request.params.shift_id, 'shift'),
        pathId(request.params.assignment_id, 'assignment'),
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/me/assignments',
    {
      config: { access: 'member' },
      schema: {
        tags: ['assignments'],
        operationId: 'listMyAssignments',
        summary: 'Your own assignments, upcoming first, with shift, event, role and place; filter by time',
        description:
          'Every assignment of the caller with its shift (times, name, status), event (name and window), the slot’s role and the shift’s location (name, one-line address, coordinates; null when the shift names none), in one read: shifts not yet ended first, soonest first, then past ones, latest first. from and to keep the assignments whose shift overlaps [from, to), either end open when absent; to at or before from, a malformed time or an unknown query parameter is 422.',
        security: bearerSecurity,
        querystring: MyAssignmentsQuery,
        response: {
          200: ok(Type.Array(MyAssignment), 'The caller’s assignments', [exampleMyAssignment]),
          ...errorResponses(['VALIDATION_FAILED']),
        },
      },
    },
    async (request) => getMyAssignments(deps, identityOf(request), request.query),
  );

  app.get(
    '/api/v1/users/:id/assignments',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['assignments'],
        operationId: 'listUserAssignments',
        summary: 'One person’s assignments, as GET /me/assignments gives them to that person (admins)',
        description:
          'Admins only. The assignments of an admin or employee of the tenant, in exactly the shape and order of GET /me/assignments (one read: shift, event, slot role and location; shifts not yet ended first, soonest first, then past ones, latest first), drafts included. from and to keep the assignments whose shift overlaps [from, to), either end open when absent, each an instant or a calendar date (the start of that day in the tenant’s time zone); to at or before from, a malformed time or an unknown query parameter is 422. Anyone else (another tenant’s user, a customer, an unknown id) is 404.',
        security: bearerSecurity,
        params: IdParams,
        querystring: MyAssignmentsQuery,
        response: {
          200: ok(Type.Array(MyAssignment), 'The person’s assignments', [exampleMyAssignment]),
          ...errorResponses([...pathIdCodes, 'VALIDATION_FAILED'], {
            messages: { NOT_FOUND: 'user not found', VALIDATION_FAILED: 'to: must be after from' },
          }),
        },
      },
    },
    async (request) =>
      getUserAssignments(deps, identityOf(request), pathId(request.params.id, 'user'), request.query),
  );
}
