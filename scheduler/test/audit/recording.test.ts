import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { asTenant } from '../../src/db/tenant-scope.ts';
import { type Caller, uniqueName, useRouteTests } from '../support/context.ts';

/**
 * How the audit trigger (migration 0015) writes what it records: by each column's type,
 * never by what a value looks like; only the database writes rows; the listing reads
 * its page off an index.
 */
const t = useRouteTests();

async function changesOf(caller: Caller, targetId: string) {
  const log = await caller.request('GET', `/api/v1/audit-log?target_id=${targetId}`);
  expect(log.statusCode, log.body).toBe(200);
  return (log.json() as { changes: { after: Record<string, unknown> } }[])[0]?.changes.after;
}

describe('values by column type', () => {
  it('keeps free text that looks like an impossible instant, and stores the record (not 500)', async () => {
    const reason = '2026-13-45T99:99:99+00:00';
    const response = await t.employee.request('POST', '/api/v1/me/time-off', {
      starts_at: '2031-08-01T00:00:00Z',
      ends_at: '2031-08-02T00:00:00Z',
      reason,
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(await changesOf(t.admin, response.json().id)).toMatchObject({ reason, status: 'requested' });
  });

  it('records text shaped like an instant or a uuid verbatim, and real ones in the API’s form', async () => {
    const name = '2026-01-01T00:00:00+00:00';
    const role = await t.admin.request('POST', '/api/v1/roles', { name });
    expect(role.statusCode, role.body).toBe(201);
    const after = await changesOf(t.admin, role.json().id);
    expect(after).toMatchObject({ id: role.json().id, name });
    expect(after?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const hyphenated = '0193a1b2-c3d4-7e8f-9a0b-1c2d3e4f5a6b';
    const location = await t.admin.request('POST', '/api/v1/locations', { name: hyphenated });
    expect(location.statusCode, location.body).toBe(201);
    expect(await changesOf(t.admin, location.json().id)).toMatchObject({ name: hyphenated });
  });

  it('lets a person whose signed-in name looks like an impossible instant in', async () => {
    const token = await t.ctx.token({
      role: 'employee',
      sub: uniqueName('odd'),
      name: '2026-13-45T00:00:00+00:00',
    });
    const response = await t.ctx.request('GET', '/api/v1/me', { token });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe('no noise', () => {
  it('appends nothing for any parameterless GET, as admin or employee, nor for a repeat sign-in', async () => {
    const count = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log`.execute(t.ctx.db.owner)).rows[0]?.n;
    await t.ctx.caller('employee');
    const before = await count();
    const hit: string[] = [];
    for (const route of t.ctx.routes) {
      if (route.method !== 'GET' || route.url.includes(':') || !route.url.startsWith('/api/v1/')) continue;
      for (const caller of [t.admin, t.employee]) {
        await caller.request('GET', route.url);
        if ((await count()) !== before) hit.push(route.url);
      }
    }
    expect(hit).toEqual([]);
  });
});

describe('only the database writes the log', () => {
  it('refuses the application an entry no change made (42501)', async () => {
    const forged = asTenant(t.admin.tenantId, () =>
      sql`INSERT INTO audit_log (tenant_id, id, actor_user_id, action, target_type, target_id, changes)
          VALUES (${t.admin.tenantId}, gen_random_uuid(), ${t.employee.userId}, 'role.deleted', 'role',
                  gen_random_uuid(), '{"before": {}, "after": {}}')`.execute(t.ctx.db.db),
    );
    await expect(forged).rejects.toMatchObject({ code: '42501' });
  });
});

describe('the listing', () => {
  it('reads a from/to page newest first off an index, without sorting the window', async () => {
    await sql`SET enable_seqscan = off`.execute(t.ctx.db.owner);
    try {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM audit_log
         WHERE tenant_id = ${t.admin.tenantId}::uuid AND at >= now() - interval '1 day' AND at < now()
         ORDER BY at DESC, seq DESC LIMIT 50`.execute(t.ctx.db.owner);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan Backward using audit_log_at/);
      expect(plan).not.toMatch(/Sort/);
    } finally {
      await sql`RESET enable_seqscan`.execute(t.ctx.db.owner);
    }
  });
});
