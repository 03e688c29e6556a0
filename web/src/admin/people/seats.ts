import { type Api, expectData, type Schemas } from '../../api/client.ts';

/**
 * A person's seats in shifts that have not started yet: what deactivating them frees. The
 * API lists seats per shift only (no list of one person's seats for an admin), so this reads
 * the shifts from now on and each one's seats.
 */
export async function upcomingSeats(api: Api, userId: string): Promise<Schemas['Shift'][]> {
  const now = new Date();
  const shifts = await expectData(
    api.GET('/api/v1/shifts', { params: { query: { from: now.toISOString().replace(/\.\d+Z$/, 'Z') } } }),
  );
  const upcoming = shifts.filter((shift) => Date.parse(shift.starts_at) > now.getTime());
  const held = await Promise.all(
    upcoming.map(async (shift) => {
      const seats = await expectData(
        api.GET('/api/v1/shifts/{shift_id}/assignments', { params: { path: { shift_id: shift.id } } }),
      );
      return seats.some((seat) => seat.user_id === userId) ? shift : null;
    }),
  );
  return held.filter((shift) => shift !== null);
}
