import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
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
import { CreateEventRequest, Event, EventListQuery, exampleEvent, UpdateEventRequest } from './schemas.ts';
import { changeEvent, createEvent, getEvent, getEvents, publishEvent, removeEvent } from './service.ts';

const eventMissing = { messages: { NOT_FOUND: 'event not found' } } as const;

export async function eventsRoutes(app: App, deps: Deps): Promise<void> {
  app.get(
    '/api/v1/events',
    {
      config: { access: 'member' },
      schema: {
        tags: ['events'],
        operationId: 'listEvents',
        summary: 'List the events of the tenant, by start; filter by time (employees: published ones only)',
        description:
          'Admins see every event, drafts included; employees see published events only. from and to keep the events whose [starts_at, ends_at) overlaps [from, to), either end open when absent; to at or before from, a malformed time or an unknown query parameter is 422.',
        security: bearerSecurity,
        querystring: EventListQuery,
        response: {
          200: ok(Type.Array(Event), 'The events the caller may see, earliest start first', [exampleEvent]),
          ...errorResponses(['VALIDATION_FAILED']),
        },
      },
    },
    async (request) => getEvents(deps, identityOf(request), request.query),
  );

  app.post(
    '/api/v1/events',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['events'],
        operationId: 'createEvent',
        summary: 'Create a draft event',
        description:
          'Admins only. The event starts as a draft, invisible to employees until published. ends_at must be after starts_at; location_id must name a location of the tenant.',
        security: bearerSecurity,
        body: CreateEventRequest,
        response: {
          201: ok(Event, 'The created draft event', { ...exampleEvent, status: 'draft', published_at: null }),
          ...errorResponses(bodyCodes),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createEvent(deps, identityOf(request), request.body)),
  );

  app.get(
    '/api/v1/events/:id',
    {
      config: { access: 'member' },
      schema: {
        tags: ['events'],
        operationId: 'getEvent',
        summary: 'One event (a draft is 404 to employees)',
        description:
          'Admins read any event of the tenant; employees read published events, and a draft is 404 to them.',
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(Event, 'The event', exampleEvent),
          ...errorResponses(pathIdCodes, eventMissing),
        },
      },
    },
    async (request) => getEvent(deps, identityOf(request), pathId(request.params.id, 'event')),
  );

  app.patch(
    '/api/v1/events/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['events'],
        operationId: 'updateEvent',
        summary: 'Change some fields of an event',
        description:
          'Admins only. A partial update: fields left out keep their values, null clears description or location_id. The window may move while shifts exist: shifts are not tied to the window.',
        security: bearerSecurity,
        params: IdParams,
        body: UpdateEventRequest,
        response: {
          200: ok(Event, 'The event as changed', exampleEvent),
          ...errorResponses([...pathIdCodes, ...bodyCodes], eventMissing),
        },
      },
    },
    async (request) =>
      changeEvent(deps, identityOf(request), pathId(request.params.id, 'event'), request.body),
  );

  app.delete(
    '/api/v1/events/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['events'],
        operationId: 'deleteEvent',
        summary: 'Delete an event and its shifts (409 while any shift has assignments)',
        description:
          'Admins only. The event goes with its shifts, their slots and its documents, but only while no shift has an assignment: unassign first (409 INVALID_STATE). A large event is removed in steps of at most 500 rows, each committed on its own: a 409 for a seat taken meanwhile, or a 503, may come after some of its shifts are gone; the rest stays whole, and the same request repeated goes on where it stopped.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          204: noContent('Deleted, with its shifts'),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], {
            messages: {
              ...eventMissing.messages,
              INVALID_STATE: 'a shift of this event has assignments; unassign them first',
            },
          }),
        },
      },
    },
    async (request, reply) => {
      await removeEvent(deps, identityOf(request), pathId(request.params.id, 'event'));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/events/:id/publish',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['events'],
        operationId: 'publishEvent',
        summary: 'Publish a draft event (again: 409 INVALID_STATE)',
        description:
          'Admins only. draft -> published, stamping published_at. Its published shifts become visible to employees and are announced in the same transaction: an event.published webhook event, then a shift.published one per shift, and with notify_on_assignment one schedule.published notification per person and ISO week whose shifts became visible. Publishing a published event is 409 INVALID_STATE.',
        security: bearerSecurity,
        params: IdParams,
        body: NoBody,
        response: {
          200: ok(Event, 'The published event', exampleEvent),
          ...errorResponses([...pathIdCodes, 'INVALID_STATE'], {
            messages: { ...eventMissing.messages, INVALID_STATE: 'event is already published' },
          }),
        },
      },
    },
    async (request) => publishEvent(deps, identityOf(request), pathId(request.params.id, 'event')),
  );
}
