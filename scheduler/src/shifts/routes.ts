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
import { generateShifts, maxGeneratedDays, maxGeneratedRows, splitShift } from './generation.ts';
import { getPlan } from './plan.ts';
import { publishShift, publishShifts } from './publication.ts';
import {
  BulkGenerateRequest,
  CreateShiftRequest,
  EventShiftsQuery,
  examplePlannedShift,
  exampleShift,
  exampleSlot,
  GeneratedShift,
  maxPlanDays,
  maxPublishedShifts,
  maxSlotsPerShift,
  PlannedShift,
  PlanQuery,
  PublishShiftsRequest,
  PublishShiftsResult,
  Shift,
  ShiftListQuery,
  ShiftSlotWithFill,
  SlotRequest,
  SplitParams,
  UpdateShiftRequest,
  UpdateSlotRequest,
} from './schemas.ts';
import {
  addSlot,
  changeShift,
  changeSlot,
  createShift,
  getEventShifts,
  getShift,
  getShifts,
  getSlots,
  removeShift,
  removeSlot,
} from './service.ts';

const SlotParams = Type.Object({
  id: IdParams.properties.id,
  slot_id: IdParams.properties.id,
});
const EventIdParams = Type.Object({ event_id: IdParams.properties.id });

const missing = (what: string, extra: ErrorCode[] = [], messages: Partial<Record<ErrorCode, string>> = {}) =>
  errorResponses([...pathIdCodes, ...extra], { messages: { NOT_FOUND: `${what} not found`, ...messages } });

export async function shiftsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/shifts/plan',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'getShiftPlan',
        summary: 'The plan of a window: every shift with its slots and who holds their seats',
        description: `Admins only: what the manager's week grid shows, in one read. Every shift of the tenant (drafts and shifts of draft events included) whose [starts_at, ends_at) overlaps [from, to), by start, each with its slots (oldest first) and their seats (the holder's id and display name). from and to are both required, to at most ${maxPlanDays} days after from; dates mean 00:00 in the tenant time zone. A malformed bound or event_id, to at or before from, a longer window or an unknown query parameter is 422.`,
        security: bearerSecurity,
        querystring: PlanQuery,
        response: {
          200: ok(Type.Array(PlannedShift), 'The shifts of the window, earliest start first', [
            examplePlannedShift,
          ]),
          ...errorResponses(['VALIDATION_FAILED']),
        },
      },
    },
    async (request) => getPlan(deps, identityOf(request), request.query),
  );

  app.get(
    '/api/v1/shifts',
    {
      config: { access: 'member' },
      schema: {
        tags: ['shifts'],
        operationId: 'listShifts',
        summary:
          'List shifts, by start; filter by status, event and time (employees: published shifts of published events)',
        description:
          'Admins see every shift; employees see shifts that are published and whose event is published. status filters on the derived status (completed: published and ended); from and to keep the shifts whose [starts_at, ends_at) overlaps [from, to), either end open when absent. An unknown status, a malformed event_id or time, to at or before from, or an unknown query parameter is 422.',
        security: bearerSecurity,
        querystring: ShiftListQuery,
        response: {
          200: ok(Type.Array(Shift), 'The shifts the caller may see, earliest start first', [exampleShift]),
          ...errorResponses(['VALIDATION_FAILED']),
        },
      },
    },
    async (request) => getShifts(deps, identityOf(request), request.query),
  );

  app.post(
    '/api/v1/shifts',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'createShift',
        summary: 'Create a draft shift of an event, with its slots',
        description:
          'Admins only. The shift starts as a draft. Each slot offers capacity seats to holders of role_id. A shift need not lie inside its event window (set-up and tear-down shifts).',
        security: bearerSecurity,
        body: CreateShiftRequest,
        response: {
          201: ok(Shift, 'The created draft shift', { ...exampleShift, status: 'draft', published_at: null }),
          ...errorResponses(bodyCodes),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createShift(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/events/:event_id/shifts',
    {
      config: { access: 'member' },
      schema: {
        tags: ['shifts'],
        operationId: 'listEventShifts',
        summary: 'The shifts of one event, by start; filter by time',
        description:
          'Same visibility as GET /api/v1/shifts; a draft event is 404 to employees. from and to keep the shifts overlapping [from, to); to at or before from, or an unknown query parameter, is 422.',
        security: bearerSecurity,
        params: EventIdParams,
        querystring: EventShiftsQuery,
        response: {
          200: ok(Type.Array(Shift), 'The shifts of the event the caller may see', [exampleShift]),
          ...missing('event'),
        },
      },
    },
    async (request) =>
      getEventShifts(deps, identityOf(request), pathId(request.params.event_id, 'event'), request.query),
  );

  app.get(
    '/api/v1/shifts/:id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['shifts'],
        operationId: 'getShift',
        description:
          'Admins read any shift of the tenant; employees read published shifts of published events, anything else is 404 to them.',
        summary: 'One shift (drafts and shifts of draft events are 404 to employees)',
        security: bearerSecurity,
        params: IdParams,
        response: { 200: ok(Shift, 'The shift', exampleShift), ...missing('shift') },
      },
    },
    async (request) => getShift(deps, identityOf(request), pathId(request.params.id, 'shift')),
  );

  app.patch(
    '/api/v1/shifts/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'updateShift',
        summary: 'Change some fields of a shift (times only without assignments)',
        description:
          'Admins only. A partial update. Changing starts_at or ends_at while the shift has assignments is 409 INVALID_STATE: the people on it agreed to the old times.',
        security: bearerSecurity,
        params: IdParams,
        body: UpdateShiftRequest,
        response: {
          200: ok(Shift, 'The shift as changed', exampleShift),
          ...missing('shift', [...bodyCodes, 'INVALID_STATE'], {
            INVALID_STATE: 'shift has assignments; its times change only without them',
          }),
        },
      },
    },
    async (request) =>
      changeShift(deps, identityOf(request), pathId(request.params.id, 'shift'), request.body),
  );

  app.delete(
    '/api/v1/shifts/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'deleteShift',
        description:
          'Admins only. The shift goes with its slots, but only while nobody is assigned to it (409 INVALID_STATE): unassign first.',
        summary: 'Delete a shift and its slots (409 while it has assignments)',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Deleted, with its slots'),
          ...missing('shift', ['INVALID_STATE'], {
            INVALID_STATE: 'shift has assignments; it can be deleted only without them',
          }),
        },
      },
    },
    async (request, reply) => {
      await removeShift(deps, identityOf(request), pathId(request.params.id, 'shift'));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/shifts/publish',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'publishShifts',
        summary:
          'Publish a plan in one call: shifts by ids or every shift of an event, with their events if asked; or preview it',
        description: `Admins only. Exactly one of shift_ids (1 to ${maxPublishedShifts} distinct ids) or event_id. Every draft named is published in one transaction; shifts published already stay as they are and are not counted. With include_event true, the event (event_id) or the events of the shifts named (shift_ids) are published in the same transaction where they are drafts; events_published counts them. Staff see a shift once it and its event are published: each shift that becomes visible is announced then, once (a shift.published webhook event; with notify_on_assignment, one schedule.published notification per person and ISO week whose shifts became visible), and a shift published in a draft event is announced when its event is published. With dry_run true nothing changes: the answer says what the call would do, with the people whose published week changes and the webhook events it would queue; it is refused as the call would be. An id that is not a shift of the tenant is 422 naming every such id, and nothing is published; an event_id that is not an event of the tenant is 422 too. A shift longer than 7 days (only one stored before shifts were bounded can be) is 409 INVALID_STATE, and nothing is published.`,
        security: bearerSecurity,
        body: PublishShiftsRequest,
        response: {
          200: ok(PublishShiftsResult, 'What was published (or, with dry_run, would be)', {
            published: 7,
            events_published: 1,
          }),
          ...errorResponses([...bodyCodes, 'INVALID_STATE'], {
            messages: {
              VALIDATION_FAILED: `shift_ids: no such shift in this tenant: ${exampleShift.id}`,
              INVALID_STATE: 'a shift lasts at most 7 days; change its times before publishing it',
            },
          }),
        },
      },
    },
    async (request) => publishShifts(deps, identityOf(request), request.body),
  );

  app.post(
    '/api/v1/shifts/:id/publish',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'publishShift',
        summary: 'Publish a draft shift (again: 409 INVALID_STATE)',
        description:
          'Admins only. draft -> open (or filled, or completed, as its slots and end say). Employees see it once its event is published too; it is announced (shift.published webhook event, schedule.published notification) when they can. A shift longer than 7 days (only one stored before shifts were bounded can be) is 409 INVALID_STATE until its times change.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          200: ok(Shift, 'The published shift', exampleShift),
          ...missing('shift', ['INVALID_STATE'], { INVALID_STATE: 'shift is already published' }),
        },
      },
    },
    async (request) => publishShift(deps, identityOf(request), pathId(request.params.id, 'shift')),
  );

  app.get(
    '/api/v1/shifts/:id/slots',
    {
      config: { access: 'member' },
      schema: {
        tags: ['shifts'],
        operationId: 'listShiftSlots',
        description:
          'Same visibility as the shift. Each slot carries filled_count, the assignments it holds now; slots and counts come from one statement, so they agree with each other.',
        summary: 'The slots of a shift with their fill, from one consistent read',
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(Type.Array(ShiftSlotWithFill), 'The slots, oldest first', [exampleSlot]),
          ...missing('shift'),
        },
      },
    },
    async (request) => getSlots(deps, identityOf(request), pathId(request.params.id, 'shift')),
  );

  app.post(
    '/api/v1/shifts/:id/slots',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'addShiftSlot',
        summary: 'Add a slot to a shift',
        description: `Admins only. New seats make a filled shift open again. A shift holds at most ${maxSlotsPerShift} slots (409 INVALID_STATE beyond).`,
        security: bearerSecurity,
        params: IdParams,
        body: SlotRequest,
        response: {
          201: ok(ShiftSlotWithFill, 'The new slot', { ...exampleSlot, filled_count: 0 }),
          ...missing('shift', [...bodyCodes, 'INVALID_STATE'], {
            INVALID_STATE: `a shift holds at most ${maxSlotsPerShift} slots`,
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await addSlot(deps, identityOf(request), pathId(request.params.id, 'shift'), request.body)),
  );

  app.patch(
    '/api/v1/shifts/:id/slots/:slot_id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'updateShiftSlot',
        description:
          'Admins only. Raising capacity makes a filled shift open again; lowering it below the seats already taken is 409 INVALID_STATE.',
        summary: "Change a slot's capacity (never below its fill: 409)",
        security: bearerSecurity,
        params: SlotParams,
        body: UpdateSlotRequest,
        response: {
          200: ok(ShiftSlotWithFill, 'The slot as changed', exampleSlot),
          ...missing('slot', [...bodyCodes, 'INVALID_STATE'], {
            INVALID_STATE: 'capacity 1 is below the 2 seats taken',
          }),
        },
      },
    },
    async (request) =>
      changeSlot(
        deps,
        identityOf(request),
        pathId(request.params.id, 'shift'),
        pathId(request.params.slot_id, 'slot'),
        request.body,
      ),
  );

  app.delete(
    '/api/v1/shifts/:id/slots/:slot_id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'deleteShiftSlot',
        description:
          'Admins only. A slot that holds assignments is not removed (409 INVALID_STATE): unassign first. Removing the last free slot can make the shift filled.',
        summary: 'Remove a slot (409 while it has assignments)',
        security: bearerSecurity,
        params: SlotParams,
        body: NoBody,
        response: {
          204: noContent('Removed'),
          ...missing('slot', ['INVALID_STATE'], {
            INVALID_STATE: 'slot has assignments; unassign them first',
          }),
        },
      },
    },
    async (request, reply) => {
      await removeSlot(
        deps,
        identityOf(request),
        pathId(request.params.id, 'shift'),
        pathId(request.params.slot_id, 'slot'),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/events/:event_id/shifts/bulk',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'generateEventShifts',
        summary: 'One draft shift per local day of the event window, at the given wall times',
        description: `Admins only. For every calendar day the event window touches in the tenant time zone, one draft shift from start_time to end_time local wall time; end_time at or before start_time ends the next day (overnight, which may run past the event end). A wall time skipped by a daylight-saving change moves forward by the gap; one that occurs twice is the first occurrence. All shifts are created in one transaction, with the given slots each. At most ${maxGeneratedDays} days (409 INVALID_STATE beyond) and ${maxGeneratedRows} rows, shifts and their slots together (422 naming slots beyond); days whose shifts would fall outside the years 1 to 9999 (UTC) are 422.`,
        security: bearerSecurity,
        params: EventIdParams,
        body: BulkGenerateRequest,
        response: {
          201: ok(
            Type.Array(GeneratedShift),
            'The generated draft shifts, by start, each with its warnings',
            [
              { ...exampleShift, status: 'draft', published_at: null, warnings: [] },
              {
                ...exampleShift,
                id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a72',
                status: 'draft',
                published_at: null,
                starts_at: '2027-07-03T20:00:00.000Z',
                ends_at: '2027-07-04T04:00:00.000Z',
                warnings: [
                  {
                    code: 'ENDS_AFTER_EVENT',
                    message:
                      'the shift ends at 2027-07-04T04:00:00.000Z, after its event ends at 2027-07-03T22:00:00.000Z',
                  },
                ],
              },
            ],
          ),
          ...missing('event', [...bodyCodes, 'INVALID_STATE'], {
            INVALID_STATE: `the event spans 800 days; bulk generation makes at most ${maxGeneratedDays}`,
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await generateShifts(
            deps,
            identityOf(request),
            pathId(request.params.event_id, 'event'),
            request.body,
          ),
        ),
  );

  app.post(
    '/api/v1/shifts/:id/split/:n',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['shifts'],
        operationId: 'splitShift',
        summary: 'Split a shift into n consecutive pieces, equal to the minute (2 to 96)',
        description:
          'Admins only. The original keeps its id as piece one; the other pieces copy its name, location, publication and slots (with no one in them). Boundaries fall on whole minutes, later pieces taking the remainder. Only while nobody is assigned (409 INVALID_STATE); n outside 2..96, or pieces under a minute, is 422.',
        security: bearerSecurity,
        params: SplitParams,
        body: NoBody,
        response: {
          200: ok(Type.Array(Shift), 'The n pieces, by start', [exampleShift]),
          ...missing('shift', ['VALIDATION_FAILED', 'INVALID_STATE'], {
            INVALID_STATE: 'shift has assignments; it can be split only without them',
            VALIDATION_FAILED: 'n: must be an integer from 2 to 96',
          }),
        },
      },
    },
    async (request) =>
      splitShift(deps, identityOf(request), pathId(request.params.id, 'shift'), request.params.n),
  );
}
