import { type Compilable, CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import { selectUserAssignments } from '../../src/assignments/repository.ts';
import type { Db } from '../../src/db/database.ts';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { selectEventList } from '../../src/events/repository.ts';
import { selectShiftList } from '../../src/shifts/repository.ts';
import { createTestContext, type TestContext, useRouteTests } from '../support/context.ts';
import { fillLargeTenant, type LargeTenant } from '../support/large-tenant.ts';
import { asLegacyRows } from '../support/legacy-rows.ts';
import { created, newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * The `from`/`to` filters (src/db/time-window.ts) are answered as a range of the
 * lists' `(tenant_id, …, starts_at)` btrees, bounded by the tenant's longest record
 * (migration 0011), not by reading a tenant's whole history: the plans PostgreSQL makes
 * for the lists' own queries over a week of a tenant with 100,000 shifts, run as the
 * application under the tenant wall, with the rows each answers.
 */
const onPostgres = inject('testDb') === 'postgres';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];

/** An index read in a plan: its name and the condition it was read with. */
interface IndexRead {
  index: string;
  cond: string;
}

// PGlite runs the same queries (every list test runs on it), but its planner is not the
// one that production uses and a 100,000-shift tenant takes minutes to lay down there:
// the plan is PostgreSQL's question.
describe(
  'time-window plans on PostgreSQL',
  runsIf(onPostgres, `${NEEDS_POSTGRES}: the plan is PostgreSQL’s question`),
  () => {
    let ctx: TestContext;
    let tenant: LargeTenant;
    const week = { from: '2026-03-02T00:00:00Z', to: '2026-03-09T00:00:00Z' };

    // 100,000 shifts written in a few statements: 3 ms a shift is room for a loaded machine.
    beforeAll(async () => {
      ctx = await createTestContext();
      tenant = await fillLargeTenant(ctx.db.owner);
    }, 100_000 * 3);
    afterAll(async () => ctx?.close());

    /** The index reads in the plan of `query`, run as the application in the tenant's scope, and its rows. */
    async function planOf(query: (db: Db) => Compilable): Promise<{ rows: number; reads: IndexRead[] }> {
      return asTenant(tenant.tenantId, async () => {
        const db = ctx.db.db;
        const compiled = query(db).compile();
        const rows = (await db.executeQuery(compiled)).rows.length;
        const explained = await db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${compiled.sql}`, [...compiled.parameters]),
        );
        const plan = explained.rows[0]?.['QUERY PLAN'][0]?.Plan;
        if (!plan) throw new Error('no plan');
        const reads = nodes(plan)
          .filter((node) => node['Index Name'] !== undefined)
          .map((node) => ({ index: node['Index Name'] ?? '', cond: node['Index Cond'] ?? '' }));
        return { rows, reads };
      });
    }

    /** Read through `index` with both ends of the start times in its condition: a bounded range. */
    const boundedRange = (reads: IndexRead[], index: string) =>
      reads.some(
        (read) =>
          read.index === index && read.cond.includes('starts_at >') && read.cond.includes('starts_at <'),
      );

    it('lays down the tenant it claims', () => {
      expect(tenant.shifts).toBe(100_000);
      expect(tenant.assignments).toBe(20_000);
    });

    it('reads a week of shifts as a range of shifts_starts, for admins and employees', async () => {
      for (const onlyVisible of [false, true]) {
        const { rows, reads } = await planOf((db) =>
          selectShiftList(db, { tenantId: tenant.tenantId, now: new Date(), onlyVisible, window: week }),
        );
        // 84 two-hourly starts in the week and the one running into it; drafts hidden from staff.
        expect(rows).toBe(onlyVisible ? 76 : 85);
        expect(boundedRange(reads, 'shifts_starts'), JSON.stringify(reads)).toBe(true);
        // The bound: the tenant's longest shift, one probe of shifts_length.
        expect(reads.map((read) => read.index)).toContain('shifts_length');
      }
    });

    it('reads a week of one event’s shifts as a range of shifts_event', async () => {
      const eventId = await asTenant(tenant.tenantId, async () => {
        const shift = await ctx.db.db
          .selectFrom('shifts')
          .select('event_id')
          .where('starts_at', '=', '2026-03-03T00:00:00Z')
          .executeTakeFirstOrThrow();
        return shift.event_id;
      });
      const { rows, reads } = await planOf((db) =>
        selectShiftList(db, {
          tenantId: tenant.tenantId,
          now: new Date(),
          onlyVisible: false,
          eventId,
          window: week,
        }),
      );
      expect(rows).toBeGreaterThan(0);
      expect(boundedRange(reads, 'shifts_event'), JSON.stringify(reads)).toBe(true);
    });

    it('reads the shifts from a late moment on as a range of shifts_starts', async () => {
      const { rows, reads } = await planOf((db) =>
        selectShiftList(db, {
          tenantId: tenant.tenantId,
          now: new Date(),
          onlyVisible: false,
          window: { from: '2032-10-01T00:00:00Z' },
        }),
      );
      expect(rows).toBeGreaterThan(0);
      expect(
        reads.some((read) => read.index === 'shifts_starts' && read.cond.includes('starts_at >')),
        JSON.stringify(reads),
      ).toBe(true);
    });

    it('reads a week of events as a range of events_starts', async () => {
      const { rows, reads } = await planOf((db) => selectEventList(db, tenant.tenantId, false, week));
      expect(rows).toBeGreaterThan(0);
      expect(boundedRange(reads, 'events_starts'), JSON.stringify(reads)).toBe(true);
    });

    it('reads a week of one person’s assignments as a range of an index on their start', async () => {
      const { rows, reads } = await planOf((db) =>
        selectUserAssignments(db, {
          tenantId: tenant.tenantId,
          userId: tenant.userId,
          now: new Date(),
          onlyVisible: true,
          window: week,
        }),
      );
      expect(rows).toBeGreaterThan(0);
      // Per user (0001) or across users (0008, the reminder sweep's): either is a bounded range.
      expect(
        boundedRange(reads, 'shift_assignments_user_time') || boundedRange(reads, 'shift_assignments_starts'),
        JSON.stringify(reads),
      ).toBe(true);
    });
  },
);

/**
 * The lower bound `from` minus the tenant's longest record must never leave the range of
 * timestamps PostgreSQL holds (4713 BC on): a tenant with one very long record reads more
 * of its rows, never an error. Run on whichever database the suite uses.
 */
describe('the window’s lower bound on the database in use', () => {
  const t = useRouteTests();
  const forever = { starts_at: '0001-01-01T00:00:00Z', ends_at: '9999-12-31T00:00:00Z' };

  it('reads the offsets instants take (to ±15:59) and refuses wider ones, as time/instant.ts does', async () => {
    const same = async (text: string, utc: string) => {
      const { rows } = await sql<{ same: boolean }>`
        SELECT ${text}::timestamptz = ${utc}::timestamptz AS same`.execute(t.ctx.db.owner);
      return rows[0]?.same;
    };
    expect(await same('2030-01-01T00:00:00+15:59', '2029-12-31T08:01:00Z')).toBe(true);
    expect(await same('2030-01-01T00:00:00-15:59', '2030-01-01T15:59:00Z')).toBe(true);
    await expect(same('2030-01-01T00:00:00+16:00', '2029-12-31T08:00:00Z')).rejects.toThrow(
      /time zone displacement out of range/,
    );
  });

  it('lists every time-filtered list of a tenant whose records span the whole calendar', async () => {
    const roleId = await newRole(t.admin);
    const eventId = await newEvent(t.admin, forever);
    const claimed = await newShift(t.admin, eventId, { roleId });
    await qualify(t.admin, t.employee, roleId);
    await created(t.employee, `/api/v1/shifts/${claimed.id}/slots/${claimed.slots[0]}/claim`, {});
    // A shift from before the 7-day rule, as long as its event (migration 0013 left such
    // rows in place): the longest shift bounds the assignments' window too.
    const long = await newShift(t.admin, eventId, { roleId });
    const owner = t.ctx.db.owner;
    await asLegacyRows(owner, () =>
      owner.updateTable('shifts').set(forever).where('id', '=', long.id).execute(),
    );
    for (const from of ['2000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '2030-07-02T13:00:00Z']) {
      for (const [caller, url, expected] of [
        [t.admin, `/api/v1/events?from=${from}`, [eventId]],
        [t.admin, `/api/v1/shifts?from=${from}`, [long.id, claimed.id]],
        [
          t.admin,
          `/api/v1/events/${eventId}/shifts?from=${from}&to=9999-12-31T23:59:59Z`,
          [long.id, claimed.id],
        ],
        [t.employee, `/api/v1/me/assignments?from=${from}`, [claimed.id]],
      ] as const) {
        const response = await caller.request('GET', url);
        expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
        const ids = response.json().map((row: { id: string; shift_id?: string }) => row.shift_id ?? row.id);
        expect(ids, url).toEqual(expected);
      }
    }
  });
});
