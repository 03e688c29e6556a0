import { type Api, expectData } from '../../api/client.ts';
import { inPool, type Seats, type Shift } from './data.ts';
import { shiftByDays } from './time.ts';

/**
 * Copies shifts a week forward as drafts: the same event, name, place and wall-clock times
 * seven calendar days later (a clock change in between keeps 09:00 at 09:00), with their
 * slots and none of their people. The API has no bulk copy, so each is one `POST /shifts`.
 */
export async function copyForward(
  api: Api,
  timeZone: string,
  shifts: readonly Shift[],
  seats: ReadonlyMap<string, Seats>,
): Promise<{ copied: number; refused: unknown[] }> {
  let copied = 0;
  const refused: unknown[] = [];
  await inPool(shifts, 4, async (shift) => {
    try {
      await expectData(
        api.POST('/api/v1/shifts', {
          body: {
            event_id: shift.event_id,
            name: shift.name,
            location_id: shift.location_id,
            starts_at: shiftByDays(timeZone, shift.starts_at, 7),
            ends_at: shiftByDays(timeZone, shift.ends_at, 7),
            slots: (seats.get(shift.id)?.slots ?? []).map(({ role_id, capacity }) => ({ role_id, capacity })),
          },
        }),
      );
      copied += 1;
    } catch (error) {
      refused.push(error);
    }
  });
  return { copied, refused };
}
