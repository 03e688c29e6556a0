import { describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { type Caller, FORBIDDEN_BODY, useTestContext } from '../support/context.ts';
import { appDbHooks, diskFull, on } from '../support/db-hooks.ts';
import { raceAgainst } from '../support/held-racer.ts';
import { capturingLogger, type LogLine } from '../support/probe-app.ts';
import { newEvent, newRole, newShift, qualify } from '../support/scheduling.ts';

/**
 * Granting a qualification when the database changes between the check and the write,
 * or the write fails: the database has the last word, and nothing is reported as done
 * that was not. The same for roles: test/roles/races.test.ts.
 */
const logs: LogLine[] = [];

const hooks = appDbHooks();
const t = useTestContext({
  logger: capturingLogger(logs),
  viewDb: hooks.viewDb,
});

describe('granting a qualification', () => {
  it('answers 404 when the role is deleted between the check and the grant', async () => {
    const { admin, employee } = await t.ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Vanishing' })).json();
    hooks.afterNext(on('select', 'roles'), async () => {
      await t.ctx.db.owner.deleteFrom('roles').where('id', '=', role.id).execute();
    });
    const response = await admin.request(
      'POST',
      `/api/v1/users/${employee.userId}/qualifications/${role.id}`,
    );
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'role not found' } });
    expect((await employee.request('GET', '/api/v1/me/qualifications')).json()).toEqual([]);
  });

  it('answers 404 for the user, not the role, when the user is deleted between the check and the grant', async () => {
    const { admin, employee, tenantId } = await t.ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Kept' })).json();
    // The user's key refuses the grant (user_qualifications_tenant_id_user_id_fkey); the
    // role is still there. The owner sees every tenant, and a user's id is not unique
    // across them: the delete names the tenant too.
    hooks.afterNext(on('select', 'roles'), async () => {
      await t.ctx.db.owner
        .deleteFrom('users')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', employee.userId)
        .execute();
    });
    const response = await admin.request(
      'POST',
      `/api/v1/users/${employee.userId}/qualifications/${role.id}`,
    );
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'user not found' } });
    expect((await admin.request('GET', '/api/v1/roles')).json()).toEqual([role]);
  });

  it('reports a failed grant as a failure, never as done', async () => {
    const { admin, employee } = await t.ctx.freshTenant();
    const role = (await admin.request('POST', '/api/v1/roles', { name: 'Ungranted' })).json();
    hooks.failNext(on('insert', 'user_qualifications'), diskFull());
    const response = await admin.request(
      'POST',
      `/api/v1/users/${employee.userId}/qualifications/${role.id}`,
    );
    // A full disk is an outage an operator mends: 503, and nothing changed.
    expect(response.statusCode).toBe(503);
    expect((await employee.request('GET', '/api/v1/me/qualifications')).json()).toEqual([]);
  });
});

/**
 * A claim racing the claimant's deactivation never leaves an upcoming seat to an inactive
 * user: the database's trigger reads the user's row FOR SHARE, which queues behind the
 * deactivation's row lock (and the deactivation behind it), and the deactivation frees
 * the seats it finds in its own transaction.
 */
describe('a claim racing a deactivation', () => {
  async function world() {
    const { admin, employee } = await t.ctx.freshTenant();
    const roleId = await newRole(admin);
    await qualify(admin, employee, roleId);
    const shift = await newShift(admin, await newEvent(admin), { roleId, capacities: [5] });
    const claim = () =>
      employee.request('POST', `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/claim`, {});
    const seats = async () =>
      (
        await t.ctx.db.owner
          .selectFrom('shift_assignments')
          .select('user_id')
          .where('shift_id', '=', shift.id)
          .execute()
      ).map((row) => row.user_id);
    return { admin, employee, shift, claim, seats };
  }

  it('refuses the claim (409) when the deactivation commits first, even where the sign-in memo still lets the user in', async () => {
    const { employee, claim, seats } = await world();
    // Deactivated by "another process": this one's memo still says active.
    const response = await raceAgainst(
      t.ctx.db.owner,
      (trx) =>
        trx
          .updateTable('users')
          .set({ active: false })
          .where('id', '=', employee.userId)
          .where('tenant_id', '=', employee.tenantId)
          .execute(),
      claim,
    );
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ error: { code: 'INVALID_STATE', message: 'the user is deactivated' } });
    expect(await seats()).toEqual([]);
  });

  it('frees the seat when the claim commits first', async () => {
    const { admin, employee, shift, seats } = await world();
    const response = await raceAgainst(
      t.ctx.db.owner,
      (trx) =>
        trx
          .insertInto('shift_assignments')
          .values({
            tenant_id: employee.tenantId,
            id: '0193a1b2c3d47e8f9a0b1c2d3e4f5a99',
            shift_id: shift.id,
            slot_id: shift.slots[0] as string,
            user_id: employee.userId,
            source: 'claim',
            assigned_by: employee.userId,
            starts_at: '2030-07-02T10:00:00Z',
            ends_at: '2030-07-02T14:00:00Z',
          })
          .execute(),
      () => admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: false }),
    );
    expect(response.statusCode).toBe(200);
    expect(await seats()).toEqual([]);
  });

  it('keeps a seat whose first time entry commits while the deactivation waits on it (200, not a conflict)', async () => {
    const { admin, employee, claim, seats } = await world();
    const seat = claim().then((r) => r.json().id as string);
    const on = { time_tracking_enabled: true, time_entries_before_end: true };
    expect((await admin.request('PATCH', '/api/v1/tenant/settings', on)).statusCode).toBe(200);
    const seatId = await seat;
    const response = await raceAgainst(
      t.ctx.db.owner,
      (trx) =>
        trx
          .insertInto('time_entries')
          .values({
            tenant_id: employee.tenantId,
            id: newId(),
            shift_assignment_id: seatId,
            user_id: employee.userId,
            started_at: '2030-07-02T10:00:00Z',
            ended_at: '2030-07-02T14:00:00Z',
            break_minutes: 0,
            worked_minutes: 240,
            scheduled_minutes: 240,
            overtime_minutes: 0,
            recorded_by: admin.userId,
          } as never)
          .execute(),
      () => admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: false }),
    );
    // The seat has minutes now: it stays theirs, as a record; the deactivation went through.
    expect([response.statusCode, response.json().active]).toEqual([200, false]);
    expect(await seats()).toEqual([employee.userId]);
  });

  it('ends, under truly concurrent claims and a deactivation, with the user inactive and seatless', async () => {
    for (let round = 0; round < 3; round++) {
      const { admin, employee, claim, seats } = await world();
      const answers = await Promise.all([
        claim(),
        admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: false }),
        claim(),
      ]);
      expect(answers[1]?.statusCode).toBe(200);
      for (const answer of [answers[0], answers[2]]) {
        expect([201, 403, 409]).toContain(answer?.statusCode);
      }
      expect(await seats()).toEqual([]);
      const row = await t.ctx.db.owner
        .selectFrom('users')
        .select('active')
        .where('tenant_id', '=', employee.tenantId)
        .where('id', '=', employee.userId)
        .executeTakeFirstOrThrow();
      expect(row.active).toBe(false);
    }
  });
});

/**
 * A sign-in in flight while an admin changes the user's standing in this process: the
 * sign-in writes and reads the user's row in a unit of work, so the PATCH, which locks
 * the row, commits after it; it forgets the user after its commit, and the next request
 * reads the row again. (The narrower window, a PATCH committing after the sign-in's unit
 * and before the memo learns the answer, is test/tenants/provisioning.test.ts's.)
 */
describe('a sign-in racing a change of standing', () => {
  /** The PATCH of `body` an admin sends right after `statement` of a sign-in, not waited for there. */
  function patchAfter(
    statement: 'insert' | 'select',
    admin: Caller,
    userId: string,
    body: { active: boolean },
  ) {
    let patched: Promise<number> | undefined;
    hooks.afterNext(on(statement, 'users'), async () => {
      patched = admin.request('PATCH', `/api/v1/users/${userId}`, body).then((done) => done.statusCode);
    });
    return () => patched;
  }

  it('refuses the deactivated user from the next request on, though their sign-in read them active', async () => {
    const { admin, tenant } = await t.ctx.freshTenant();
    const employee = await t.ctx.caller('employee', tenant, 'racer', { name: 'Old' });
    // A changed name: the memo misses, so the sign-in writes the row (and reads active).
    const token = await t.ctx.token({ role: 'employee', tenant, sub: 'racer', name: 'New' });
    const patched = patchAfter('insert', admin, employee.userId, { active: false });
    // The request that raced the deactivation was let in when it started...
    expect((await t.ctx.request('GET', '/api/v1/me', { token })).statusCode).toBe(200);
    expect(await patched()).toBe(200);
    // ...and the next one is refused at once.
    const next = await t.ctx.request('GET', '/api/v1/me', { token });
    expect(next.statusCode).toBe(403);
    expect(next.json()).toEqual(FORBIDDEN_BODY);
  });

  it('refuses an admin deactivated by another process the change they were let in for: the fixed 403, the reason logged', async () => {
    const { admin, employee } = await t.ctx.freshTenant();
    // Deactivated past this process: its memo of signed-in users still lets the admin in,
    // and the change itself finds them inactive under its lock.
    await t.ctx.db.owner
      .updateTable('users')
      .set({ active: false })
      .where('tenant_id', '=', admin.tenantId)
      .where('id', '=', admin.userId)
      .execute();
    logs.length = 0;
    const response = await admin.request('PATCH', `/api/v1/users/${employee.userId}`, { name: 'Renamed' });
    expect(response.statusCode).toBe(403);
    expect(response.body).toBe('{"error":{"code":"FORBIDDEN","message":"forbidden"}}');
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'access refused',
        reason: 'user is deactivated',
        reqId: response.headers['x-request-id'],
      }),
    );
    const row = await t.ctx.db.owner
      .selectFrom('users')
      .select('display_name')
      .where('id', '=', employee.userId)
      .executeTakeFirstOrThrow();
    expect(row.display_name).not.toBe('Renamed');
  });

  it('lets the reactivated user in from the next request on, though their sign-in read them inactive', async () => {
    const { admin, tenant } = await t.ctx.freshTenant();
    const employee = await t.ctx.caller('employee', tenant, 'returner', { name: 'Same' });
    const token = await t.ctx.token({ role: 'employee', tenant, sub: 'returner', name: 'Same' });
    expect(
      (await admin.request('PATCH', `/api/v1/users/${employee.userId}`, { active: false })).statusCode,
    ).toBe(200);
    // Nothing to write, so the sign-in reads the flag: reactivated right after.
    const patched = patchAfter('select', admin, employee.userId, { active: true });
    expect((await t.ctx.request('GET', '/api/v1/me', { token })).statusCode).toBe(403);
    expect(await patched()).toBe(200);
    expect((await t.ctx.request('GET', '/api/v1/me', { token })).statusCode).toBe(200);
  });
});
