import { type Static, Type } from 'typebox';
import {
  examples,
  Id,
  Instant,
  MultiLine,
  Nullable,
  OneLine,
  PartialUpdate,
  ReadOnlyId,
  ReadOnlyTimestamp,
  Timestamp,
  WindowQuery,
} from '../http/schemas.ts';

export const EventStatus = Type.Enum(['draft', 'published'], {
  type: 'string',
  description: 'draft until published; employees see published events only',
});
export type EventStatus = Static<typeof EventStatus>;

export const Event = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    name: Type.String(),
    description: Nullable(Type.String()),
    location_id: Nullable(Id),
    starts_at: Timestamp,
    ends_at: Timestamp,
    status: { ...EventStatus, readOnly: true },
    published_at: Nullable(Type.String({ ...Timestamp, readOnly: true })),
    submission_id: Nullable(
      Type.String({ ...Id, readOnly: true, description: 'The form submission it was converted from' }),
    ),
    created_at: ReadOnlyTimestamp,
  },
  { title: 'Event' },
);
export type Event = Static<typeof Event>;

export const exampleEvent: Event = {
  id: examples.eventId,
  tenant_id: examples.tenantId,
  name: 'Summer festival',
  description: 'Three days on the river bank',
  location_id: examples.locationId,
  starts_at: '2027-07-02T08:00:00.000Z',
  ends_at: '2027-07-05T00:00:00.000Z',
  status: 'published',
  published_at: '2026-11-03T10:00:00.000Z',
  submission_id: null,
  created_at: examples.createdAt,
};

const Name = OneLine({ minLength: 1, maxLength: 200, description: 'Trimmed; not blank; one line' });
/** The longest event description, in characters (code points); a converted submission's too. */
export const maxDescriptionLength = 5000;

const Description = Nullable(
  MultiLine({
    maxLength: maxDescriptionLength,
    description: 'Trimmed; blank is stored as null; line breaks kept',
  }),
);
const LocationRef = Nullable(Type.String({ ...Id, description: 'A location of the tenant (32 hex digits)' }));

export const CreateEventRequest = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    location_id: Type.Optional(LocationRef),
    starts_at: Instant('Start of the event window'),
    ends_at: Instant('End of the event window; after starts_at'),
  },
  {
    title: 'CreateEventRequest',
    additionalProperties: false,
    examples: [
      { name: 'Summer festival', starts_at: '2027-07-02T10:00:00+02:00', ends_at: '2027-07-05T00:00:00Z' },
    ],
  },
);
export type CreateEventRequest = Static<typeof CreateEventRequest>;

export const UpdateEventRequest = PartialUpdate(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    location_id: Type.Optional(LocationRef),
    starts_at: Type.Optional(Instant('Start of the event window')),
    ends_at: Type.Optional(Instant('End of the event window; after starts_at')),
  },
  {
    title: 'UpdateEventRequest',
    description: 'A partial update: fields left out keep their values; null clears an optional field.',
    examples: [{ description: 'Moved indoors', location_id: examples.locationId }],
  },
);
export type UpdateEventRequest = Static<typeof UpdateEventRequest>;

/** `GET /events`: the time filter; unknown parameters are 422, so a typo never lists everything. */
export const EventListQuery = Type.Object(WindowQuery, { additionalProperties: false });
export type EventListQuery = Static<typeof EventListQuery>;
