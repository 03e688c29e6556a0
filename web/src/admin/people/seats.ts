import { type Api, expectData, type Schemas } from '../../api/client.ts';

/**
 * A person's seats in shifts that have not started yet: what deactivating them frees. One
 * call, the person's assignments from now on (`GET /users/{id}/assignments`), soonest
 * first; a shift under way is theirs to finish, so it is left out.
 */
export async function upcomingSeats(api: Api, userId: string): Promise<Schemas['MyAssignment']['shift'][]> {
  const now = new Date();
  const seats = await expectData(
    api.GET('/api/v1/users/{id}/assignments', {
      params: { path: { id: userId }, query: { from: now.toISOString().replace(/\.\d+Z$/, 'Z') } },
    }),
  );
  return seats.map((seat) => seat.shift).filter((shift) => Date.parse(shift.starts_at) > now.getTime());
}
