import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { bearerSecurity, errorResponses, NoBody, noContent, ok } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import {
  CalendarToken,
  CalendarTokenStatus,
  exampleCalendarToken,
  exampleCalendarTokenStatus,
} from './schemas.ts';
import { calendarFeed, createCalendarToken, getCalendarTokenStatus, revokeCalendarToken } from './service.ts';

/** What a feed with one shift looks like (shortened: the VTIMEZONE block is left out). */
const exampleFeed = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//shift-scheduler//shifts//EN',
  'NAME:Shifts of Alice',
  'X-WR-CALNAME:Shifts of Alice',
  'BEGIN:VEVENT',
  'UID:0190f5f2a3b47c8d9e0f1a2b3c4d5e6f@shift-scheduler',
  'DTSTAMP:20300601T090000Z',
  'DTSTART;TZID=Europe/Berlin:20300702T080000',
  'DTEND;TZID=Europe/Berlin:20300702T140000',
  'SUMMARY:Bar\\, early (Summer fair)',
  'LOCATION:Hall 3\\, Messedamm 22\\, 14055 Berlin',
  'END:VEVENT',
  'END:VCALENDAR',
].join('\r\n');

export async function calendarRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/me/calendar-token',
    {
      config: { access: 'member' },
      schema: {
        tags: ['calendar'],
        operationId: 'createCalendarToken',
        summary: 'A secret calendar address for your shifts',
        description:
          'Makes a new secret feed URL (iCalendar) of the caller’s shifts; a previous one stops working. The token is shown only now and stored as a hash. The URL needs no bearer token: treat it like a password.',
        security: bearerSecurity,
        body: NoBody,
        response: {
          201: ok(CalendarToken, 'The new feed address', exampleCalendarToken),
          ...errorResponses([]),
        },
      },
    },
    async (request, reply) => {
      const base = deps.publicBaseUrl ?? `${request.protocol}://${request.host}`;
      return reply.code(201).send(await createCalendarToken(deps, identityOf(request), base));
    },
  );

  app.get(
    '/api/v1/me/calendar-token',
    {
      config: { access: 'member' },
      schema: {
        tags: ['calendar'],
        operationId: 'getCalendarTokenStatus',
        summary: 'Whether you have a calendar address, and since when',
        description:
          'The address itself is shown only when it is made (POST), since only its hash is kept; this says whether one works (200 with when it was made) or none does (404), so an app offers to make one or to replace it.',
        security: bearerSecurity,
        response: {
          200: ok(CalendarTokenStatus, 'The caller’s address works', exampleCalendarTokenStatus),
          ...errorResponses(['NOT_FOUND'], { messages: { NOT_FOUND: 'calendar token not found' } }),
        },
      },
    },
    async (request) => getCalendarTokenStatus(deps, identityOf(request)),
  );

  app.delete(
    '/api/v1/me/calendar-token',
    {
      config: { access: 'member' },
      schema: {
        tags: ['calendar'],
        operationId: 'revokeCalendarToken',
        summary: 'Revoke your calendar address',
        description: 'The feed URL stops working at once (also when there was none: 204).',
        security: bearerSecurity,
        body: NoBody,
        response: { 204: noContent('Revoked'), ...errorResponses([]) },
      },
    },
    async (request, reply) => {
      await revokeCalendarToken(deps, identityOf(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/cal/:file',
    {
      config: { access: 'public' },
      schema: {
        tags: ['calendar'],
        security: [],
        operationId: 'getCalendarFeed',
        summary: 'A user’s shifts as iCalendar (the secret feed address)',
        description:
          'No bearer token: the address is the secret. Shifts ending in the last 90 days and all later ones, with stable UIDs, the tenant’s time zone and the place. Unknown or revoked tokens are 404.',
        params: Type.Object({
          file: Type.String({
            maxLength: 100,
            description: '{token}.ics',
            examples: ['q3Vw0m8lYg2i4kqGJ0aN7rC5pTzX1bEoHfD6uS9yWvA.ics'],
          }),
        }),
        response: {
          200: {
            description: 'RFC 5545 calendar',
            content: { 'text/calendar': { schema: Type.String(), example: exampleFeed } },
          },
          ...errorResponses(['NOT_FOUND'], {
            authenticated: false,
            messages: { NOT_FOUND: 'calendar not found' },
          }),
        },
      },
    },
    async (request, reply) => {
      const match = /^(.+)\.ics$/.exec(request.params.file);
      if (!match?.[1]) throw notFound('calendar');
      const body = await calendarFeed(deps, match[1]);
      return reply
        .header('content-type', 'text/calendar; charset=utf-8')
        .header('cache-control', 'private, no-store')
        .header('referrer-policy', 'no-referrer')
        .send(body);
    },
  );
}
