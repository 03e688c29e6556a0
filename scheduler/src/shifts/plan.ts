import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { Identity } from '../auth/identity.ts';
import type { Db } from '../db/database.ts';
import { uuidColumnToWire } from '../db/wire-types.ts';
import type { Deps } from '../deps.ts';
import { validationFailed } from '../errors.ts';
import { queryId } from '../ids.ts';
import { filterWindow } from '../tenants/service.ts';
import { type ShiftFilter, selectShiftList } from './repository.ts';
import { maxPlanDays, type PlannedShift, type PlanQuery } from './schemas.ts';

const hour = 3_600_000;

/**
 * `GET /shifts/plan` (admins): the window's shifts, drafts included, with slots and seats.
 * The window is bounded (`maxPlanDays`, an hour more for a clock change inside it).
 */
export async function getPlan(deps: Deps, caller: Identity, query: PlanQuery): Promise<PlannedShift[]> {
  const eventId = query.event_id === undefined ? undefined : queryId('event_id', query.event_id);
  const window = await filterWindow(deps, caller, query);
  const span = Date.parse(window.to ?? '') - Date.parse(window.from ?? '');
  if (span > maxPlanDays * 24 * hour + hour) {
    throw validationFailed('to', `must be at most ${maxPlanDays} days after from`);
  }
  return listPlan(deps.db, {
    tenantId: caller.tenantId,
    now: deps.clock.now(),
    onlyVisible: false,
    eventId,
    window,
  });
}

/**
 * The plan of a window as the manager's week grid shows it: every shift with its slots
 * and who holds their seats, by name. One statement, so one consistent read (a seat
 * counted in `filled_count` is the seat listed), however many shifts the week has: the
 * grid never asks shift by shift.
 */
export function listPlan(db: Db, filter: ShiftFilter): Promise<PlannedShift[]> {
  return selectShiftList(db, filter)
    .select((shift) =>
      jsonArrayFrom(
        shift
          .selectFrom('shift_slots as slot')
          .select((slot) => [
            uuidColumnToWire('slot.id').as('id'),
            uuidColumnToWire('slot.role_id').as('role_id'),
            'slot.capacity',
            'slot.filled_count',
            jsonArrayFrom(
              slot
                .selectFrom('shift_assignments as seat')
                .leftJoin('users as person', (join) =>
                  join
                    .onRef('person.tenant_id', '=', 'seat.tenant_id')
                    .onRef('person.id', '=', 'seat.user_id'),
                )
                .select([
                  uuidColumnToWire('seat.id').as('assignment_id'),
                  uuidColumnToWire('seat.user_id').as('user_id'),
                  'person.display_name as name',
                ])
                .whereRef('seat.tenant_id', '=', 'slot.tenant_id')
                .whereRef('seat.slot_id', '=', 'slot.id')
                .orderBy('person.display_name')
                .orderBy('seat.id'),
            ).as('seats'),
          ])
          .whereRef('slot.tenant_id', '=', 'shifts.tenant_id')
          .whereRef('slot.shift_id', '=', 'shifts.id')
          .orderBy('slot.created_at')
          .orderBy('slot.id'),
      ).as('slots'),
    )
    .execute();
}
