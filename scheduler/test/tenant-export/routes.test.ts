import { readdirSync, readlinkSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { until } from '../../../scripts/test-wait.ts';
import type { Manifest } from '../../src/tenant-export/archive.ts';
import { SCHEMA_VERSION } from '../../src/tenant-export/archive.ts';
import { EXPORT_PAGE_ROWS } from '../../src/tenant-export/snapshot.ts';
import { capturedLog } from '../support/captured-log.ts';
import { type Caller, FORBIDDEN_BODY, useRouteTests } from '../support/context.ts';
import { newEvent, newRole } from '../support/scheduling.ts';
import { layDownShifts } from '../support/shifts.ts';
import { archiveRows, readArchive } from '../support/tenant-archive.ts';
import { assignedShift, recordTimeOn, setTimeTracking } from '../support/time-tracking.ts';

/**
 * GET /api/v1/tenant/export: the tenant's whole data as one tar.gz, read back file by file
 * against what the database holds for the tenant, and nothing of any other tenant.
 */
const logged = capturedLog();
const t = useRouteTests({ logger: logged.log });

const dashed = (id: string) => id.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

/** A scene: the employee on a shift (Bar, of Festival) with time recorded, and a calendar address. */
async function scene(admin: Caller, employee: Caller) {
  await setTimeTracking(admin, true, 'Europe/Berlin');
  const assignment = await assignedShift(admin, employee);
  await recordTimeOn(admin, assignment);
  const token = await employee.request('POST', '/api/v1/me/calendar-token');
  expect(token.statusCode, token.body).toBe(201);
  return { assignment };
}

async function exported(admin: Caller) {
  const response = await admin.request('GET', '/api/v1/tenant/export');
  expect(response.statusCode, response.body).toBe(200);
  return { response, files: await readArchive(response.rawPayload) };
}

describe('GET /api/v1/tenant/export', () => {
  it('answers a tar.gz of the manifest, every table of the tenant and the files people open', async () => {
    const { assignment } = await scene(t.admin, t.employee);
    const { response, files } = await exported(t.admin);
    expect(response.headers['content-type']).toBe('application/gzip');
    expect(response.headers['cache-control']).toBe('private, no-store');
    expect(response.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="tenant-${t.admin.tenantId}-\\d{4}-\\d{2}-\\d{2}\\.tar\\.gz"$`),
    );
    expect([...files.keys()][0]).toBe('manifest.json');
    const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '') as Manifest;
    expect(manifest).toMatchObject({
      format: 'scheduler-tenant-archive',
      format_version: 1,
      tenant_id: t.admin.tenantId,
      schema_version: SCHEMA_VERSION,
    });
    expect(Date.parse(manifest.exported_at)).not.toBeNaN();
    // Parents first: what a row refers to comes before it.
    const order = manifest.tables.map((table) => table.name);
    expect(order.indexOf('tenants')).toBeLessThan(order.indexOf('users'));
    expect(order.indexOf('users')).toBeLessThan(order.indexOf('shift_assignments'));
    expect(order.indexOf('shifts')).toBeLessThan(order.indexOf('shift_slots'));
    expect(order.indexOf('time_entries')).toBeLessThan(order.indexOf('overtime_ledger'));
    // Each count is what the database holds for the tenant, and what its file holds.
    for (const table of manifest.tables) {
      const tenantColumn = table.name === 'tenants' ? 'id' : 'tenant_id';
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql.table(table.name)} WHERE ${sql.ref(tenantColumn)} = ${t.admin.tenantId}`.execute(
        t.ctx.db.owner,
      );
      expect({ table: table.name, rows: table.rows }).toEqual({ table: table.name, rows: rows[0]?.n });
      expect(archiveRows(files, table.name)).toHaveLength(table.rows);
    }
    expect(archiveRows(files, 'shift_assignments').map((row) => row.id)).toEqual([dashed(assignment)]);
    expect(archiveRows(files, 'time_entries')).toHaveLength(1);
    expect(archiveRows(files, 'overtime_ledger')).toHaveLength(1);
    expect(
      archiveRows(files, 'users')
        .map((row) => row.id)
        .sort(),
    ).toEqual([dashed(t.admin.userId), dashed(t.employee.userId)].sort());
    expect(manifest.excluded).toHaveProperty('jobs');
    expect(manifest.excluded_documents).toEqual({});
    // The employee's calendar as their feed shows it; the payroll files as an admin downloads them.
    const calendar = files.get(`calendars/${t.employee.userId}.ics`)?.toString() ?? '';
    expect(calendar).toContain('BEGIN:VCALENDAR');
    expect(calendar).toContain('SUMMARY:Bar (Festival)');
    const payroll = manifest.documents.filter((name) => name.startsWith('payroll/'));
    expect(payroll).toHaveLength(2);
    expect(files.get(payroll[1] ?? '')?.toString()).toContain('balance_minutes');
    expect([...files.keys()].sort()).toEqual(
      ['manifest.json', ...manifest.tables.map((table) => table.file), ...manifest.documents].sort(),
    );
  });

  it('leaves the payroll files out while time tracking is off, and the manifest says why', async () => {
    await scene(t.admin, t.employee);
    await setTimeTracking(t.admin, false);
    // What an admin downloads by hand then: nothing, the feature is absent.
    const csv = await t.admin.request('GET', '/api/v1/time-tracking/balances.csv');
    expect(csv.statusCode).toBe(404);
    const { files } = await exported(t.admin);
    const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '') as Manifest;
    expect(manifest.documents).toEqual([`calendars/${t.employee.userId}.ics`]);
    expect([...files.keys()].filter((name) => name.startsWith('payroll/'))).toEqual([]);
    expect(manifest.excluded_documents).toEqual({
      'payroll/': 'time tracking is switched off for this tenant: its payroll CSVs are not offered',
    });
    // The recorded time itself is data: its rows are archived all the same.
    expect(archiveRows(files, 'time_entries')).toHaveLength(1);
    expect(archiveRows(files, 'overtime_ledger')).toHaveLength(1);
  });

  it('holds nothing of another tenant, though it has the same kinds of records', async () => {
    await scene(t.admin, t.employee);
    const other = await t.ctx.freshTenant();
    await scene(other.admin, other.employee);
    const { response, files } = await exported(t.admin);
    const text = Buffer.concat([...files.values()]).toString('utf8');
    // User ids follow the token's subject, which tenants share here: their other records.
    const { rows } = await sql<{ id: string }>`
      SELECT id::text FROM shifts WHERE tenant_id = ${other.admin.tenantId}
      UNION ALL SELECT id::text FROM shift_assignments WHERE tenant_id = ${other.admin.tenantId}
      UNION ALL SELECT id::text FROM audit_log WHERE tenant_id = ${other.admin.tenantId}
      UNION ALL SELECT name FROM roles WHERE tenant_id = ${other.admin.tenantId}`.execute(t.ctx.db.owner);
    expect(rows.length).toBeGreaterThan(4);
    for (const id of [other.admin.tenantId, ...rows.map((row) => row.id.replaceAll('-', ''))]) {
      expect(text).not.toContain(id);
      expect(text).not.toContain(dashed(id));
    }
    const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '') as Manifest;
    for (const table of manifest.tables) {
      const column = table.name === 'tenants' ? 'id' : 'tenant_id';
      for (const row of archiveRows(files, table.name)) expect(row[column]).toBe(dashed(t.admin.tenantId));
    }
    expect(response.rawPayload.length).toBeGreaterThan(0);
  });

  it('leaves no spooled file behind once the download ends (they hold the secrets of the tenant)', async () => {
    await scene(t.admin, t.employee);
    expect(spooled()).toEqual([]);
    await exported(t.admin);
    await expect.poll(spooled).toEqual([]);
  });

  it('is recorded in the log: which tenant, which admin, how many rows; never cached', async () => {
    await scene(t.admin, t.employee);
    const { response, files } = await exported(t.admin);
    expect(response.headers['cache-control']).toBe('private, no-store');
    const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '') as Manifest;
    const rows = manifest.tables.reduce((n, table) => n + table.rows, 0);
    const lines = logged.lines.filter((line) => line.msg === 'tenant exported');
    expect(lines.filter((line) => line.tenant === t.admin.tenantId)).toEqual([
      expect.objectContaining({
        level: 30,
        tenant: t.admin.tenantId,
        user: t.admin.userId,
        tables: manifest.tables.length,
        rows,
        documents: manifest.documents.length,
      }),
    ]);
  });

  it('is not recorded when refused', async () => {
    await t.employee.request('GET', '/api/v1/tenant/export');
    expect(
      logged.lines.filter((line) => line.msg === 'tenant exported' && line.tenant === t.employee.tenantId),
    ).toEqual([]);
  });

  it('is for admins only: 403 for an employee', async () => {
    const response = await t.employee.request('GET', '/api/v1/tenant/export');
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual(FORBIDDEN_BODY);
  });

  it('refuses a query parameter it does not know: 422 naming it', async () => {
    const response = await t.admin.request('GET', '/api/v1/tenant/export?since=2030-01-01');
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'since: is not an allowed field' },
    });
  });

  it('reads a table in pages: more rows than a page come out once each, in key order', async () => {
    const role = await newRole(t.admin);
    const event = await newEvent(t.admin);
    const count = EXPORT_PAGE_ROWS * 2 + 1;
    await layDownShifts(
      t.ctx.db.owner,
      { tenantId: t.admin.tenantId, eventId: event, roleId: role },
      count,
      1,
    );
    const { files } = await exported(t.admin);
    const { rows } = await sql<{ id: string }>`
      SELECT id::text FROM shifts WHERE tenant_id = ${t.admin.tenantId} ORDER BY tenant_id, id`.execute(
      t.ctx.db.owner,
    );
    expect(archiveRows(files, 'shifts').map((row) => row.id)).toEqual(rows.map((row) => row.id));
    expect(rows).toHaveLength(count);
  }, 60_000);
});

/** Form submissions of this many bytes each (random hex, which gzip halves at best). */
const BIG_SUBMISSION_BYTES = 3_200_000;
/** Enough of them that the archive is many times what a socket's buffers hold. */
const BIG_SUBMISSIONS = 8;

/** The spooled files that hold the large submissions. */
const LARGE_FILE = /\/tables\/(form_submissions|audit_log)\.jsonl$/;

/** The spool folders of exports in this file's temporary directory. */
const spooled = () => readdirSync(tmpdir()).filter((name) => name.startsWith('tenant-export-'));

/** Files of a spool folder this process holds open (Linux: /proc/self/fd). */
function heldSpoolFiles(): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes('/tenant-export-')) held.push(target);
    } catch {
      // Closed between the listing and the read: not held.
    }
  }
  return held;
}

describe('GET /api/v1/tenant/export, the download cut by the client', () => {
  it(
    'removes the spool folder, holds no file or snapshot, and the next requests and export work',
    async () => {
      const form = await t.admin.request('POST', '/api/v1/forms', {
        title: 'Large',
        fields: [{ name: 'note', label: 'Note', type: 'text' }],
      });
      expect(form.statusCode, form.body).toBe(201);
      await sql`
        INSERT INTO form_submissions (tenant_id, id, form_id, data)
        SELECT ${t.admin.tenantId}, gen_random_uuid(), ${String(form.json().id)},
               jsonb_build_object('note', (SELECT string_agg(md5(random()::text || i || j), '')
                                             FROM generate_series(1, ${BIG_SUBMISSION_BYTES / 32}::int) j))
          FROM generate_series(1, ${BIG_SUBMISSIONS}::int) i`.execute(t.ctx.db.owner);
      await t.ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.ctx.app.server.address() as AddressInfo;

      // The client takes the answer's head, then reads no more: the server packs on until
      // the socket's buffers are full, midway through one of the large files (the
      // submissions, and the audit log that recorded them: each many times what the
      // buffers hold). The client goes away then.
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        get(
          {
            host: '127.0.0.1',
            port,
            path: '/api/v1/tenant/export',
            headers: { authorization: `Bearer ${t.admin.token}` },
          },
          resolve,
        ).once('error', reject);
      });
      expect(response.statusCode).toBe(200);
      response.pause();
      await until(() => heldSpoolFiles().some((file) => LARGE_FILE.test(file)));
      const gone = new Promise((resolve) => response.socket.once('close', resolve));
      response.socket.destroy();
      await gone;

      await expect.poll(spooled).toEqual([]);
      await expect.poll(heldSpoolFiles).toEqual([]);
      // No snapshot or session held: a write and a read answer, then a whole export.
      const role = await t.admin.request('POST', '/api/v1/roles', { name: 'After the cut' });
      expect(role.statusCode, role.body).toBe(201);
      expect((await t.admin.request('GET', '/api/v1/roles')).statusCode).toBe(200);
      const { files } = await exported(t.admin);
      expect(archiveRows(files, 'form_submissions')).toHaveLength(BIG_SUBMISSIONS);
      await expect.poll(spooled).toEqual([]);
      expect(heldSpoolFiles()).toEqual([]);
    },
    BIG_SUBMISSIONS * 15_000,
  );
});
