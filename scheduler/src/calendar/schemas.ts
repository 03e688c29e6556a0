import { type Static, Type } from 'typebox';

export const CalendarToken = Type.Object(
  {
    token: Type.String({ description: 'The secret; shown once, stored only as a hash' }),
    url: Type.String({ format: 'uri', description: 'The feed address to subscribe to in a calendar app' }),
  },
  { title: 'CalendarToken' },
);
export type CalendarToken = Static<typeof CalendarToken>;

export const exampleCalendarToken: CalendarToken = {
  token: 'q3Vw0m8lYg2i4kqGJ0aN7rC5pTzX1bEoHfD6uS9yWvA',
  url: 'https://scheduler.example.com/cal/q3Vw0m8lYg2i4kqGJ0aN7rC5pTzX1bEoHfD6uS9yWvA.ics',
};

export const CalendarTokenStatus = Type.Object(
  {
    created_at: Type.String({
      format: 'date-time',
      readOnly: true,
      description: 'When the current address was made; the address itself is shown only then',
    }),
  },
  { title: 'CalendarTokenStatus', description: 'The caller has a calendar address that works' },
);
export type CalendarTokenStatus = Static<typeof CalendarTokenStatus>;

export const exampleCalendarTokenStatus: CalendarTokenStatus = { created_at: '2026-11-20T16:05:00.000Z' };
