import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type DevIssuer, openDevIssuer } from '../../src/auth/dev-issuer.ts';
import { claimToUuid } from '../../src/auth/identity.ts';
import type { Db } from '../../src/db/database.ts';
import { seedDemo } from '../../src/demo/seed.ts';
import { DEMO_TENANT, demoPeople } from '../../src/dev-sign-in/people.ts';
import type { App } from '../../src/http/types.ts';
import { MIGRATION_NAMES, SCHEMA_VERSION } from '../../src/tenant-export/archive.ts';
import { ImportRefused, importTenant } from '../../src/tenant-export/import.ts';
import { tenantCatalogue } from '../../src/tenant-export/tables.ts';
import { PROCESS_START_MS } from '../support/api-process.ts';
import { noGeocoder } from '../support/context.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { layDownEventTenant } from '../support/shifts.ts';
import { packArchive, readArchive } from '../support/tenant-archive.ts';
import { ledgerMismatches } from '../support/time-tracking.ts';

/**
 * The tenant archive imported: the demo tenant and more exported through the API, imported
 * into an empty database, every row of every table compared; and the archives refused,
 * with nothing written.
 */
const run = promisify(execFile);
let source: TestDatabase;
let app: App;
let issuer: DevIssuer;
let tenantId: string;
let archive: Buffer;
const opened: TestDatabase[] = [];

async function as(
  subject: string,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  body?: unknown,
  on: App = app,
) {
  const person = demoPeople.find((p) => p.subject === subject);
  if (!person) throw new Error(subject);
  const token = await issuer.sign({
    tenant: DEMO_TENANT,
    role: person.role,
    subject,
    name: person.name,
    email: person.email,
    ttlSeconds: 600,
  });
  return on.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function emptyDatabase(): Promise<TestDatabase> {
  const db = await openTestDatabase();
  opened.push(db);
  return db;
}

/** Every row of the tenant in every archived table, as the database writes it, in key order. */
async function tenantRows(db: Db, tenant: string): Promise<Record<string, string[]>> {
  const catalogue = await tenantCatalogue(db);
  const rows: Record<string, string[]> = {};
  for (const table of catalogue.tables) {
    const key = sql.join(table.key.map((column) => sql.ref(column)));
    const found = await sql<{ line: string }>`
      SELECT to_jsonb(t)::text AS line FROM ${sql.table(table.name)} t
       WHERE ${sql.ref(table.tenantColumn)} = ${tenant} ORDER BY ${key}`.execute(db);
    rows[table.name] = found.rows.map((row) => row.line);
  }
  return rows;
}

const rowCount = (rows: Record<string, string[]>) =>
  Object.values(rows).reduce((n, list) => n + list.length, 0);

/** The archive with its manifest changed by `edit` (the tar repacked as the export packs it). */
async function withManifest(edit: (manifest: Record<string, unknown>) => void): Promise<Buffer> {
  const files = await readArchive(archive);
  const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '{}') as Record<string, unknown>;
  edit(manifest);
  files.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
  return packArchive(files);
}

const ok = async (response: Promise<{ statusCode: number; body: string; json(): unknown }>, status = 201) => {
  const answer = await response;
  expect(answer.statusCode, answer.body).toBe(status);
  return answer.json() as Record<string, unknown>;
};

/**
 * Beyond the demo week, a row in every table the archive holds: time recorded (ledger and
 * balance), a payout, time off, a calendar address, a webhook, a form and a submission
 * with nested answers, and, laid down as the owner, what only outside services or the
 * background write (a push subscription, a document, a reminder sent).
 */
async function moreThanTheDemo(): Promise<void> {
  const MARIA = 'demo-employee-1';
  const settings = await ok(as('demo-admin', 'GET', '/api/v1/tenant/settings'), 200);
  await ok(
    as('demo-admin', 'PATCH', '/api/v1/tenant/settings', { ...settings, time_entries_before_end: true }),
    200,
  );
  const seats = (await ok(as(MARIA, 'GET', '/api/v1/me/assignments'), 200)) as unknown as {
    id: string;
    shift: { starts_at: string; ends_at: string };
  }[];
  const seat = seats[0];
  if (!seat) throw new Error('Maria has no seat in the demo week');
  const ended = new Date(Date.parse(seat.shift.ends_at) + 90 * 60_000).toISOString();
  await ok(
    as('demo-admin', 'POST', '/api/v1/time-tracking/entries', {
      shift_assignment_id: seat.id,
      started_at: seat.shift.starts_at,
      ended_at: ended,
      break_minutes: 0,
    }),
  );
  const maria = claimToUuid(issuer.issuer, MARIA);
  await ok(
    as('demo-admin', 'POST', '/api/v1/time-tracking/payouts', { user_id: maria, minutes: 30, note: 'July' }),
  );
  await ok(
    as(MARIA, 'POST', '/api/v1/me/time-off', {
      starts_at: '2031-03-01T00:00:00Z',
      ends_at: '2031-03-08T00:00:00Z',
      reason: 'Ski',
    }),
  );
  await ok(as(MARIA, 'POST', '/api/v1/me/calendar-token'));
  await ok(
    as('demo-admin', 'POST', '/api/v1/webhooks', {
      url: 'https://hooks.example.com/shifts',
      events: ['shift.published'],
    }),
  );
  const form = await ok(
    as('demo-admin', 'POST', '/api/v1/forms', {
      title: 'Booking',
      fields: [{ name: 'guests', label: 'Guests', type: 'number', required: true }],
    }),
  );
  const event = (
    await sql<{ id: string }>`SELECT id FROM events WHERE tenant_id = ${tenantId} LIMIT 1`.execute(
      source.owner,
    )
  ).rows[0]?.id;
  await sql`
    INSERT INTO form_submissions (tenant_id, id, form_id, data, customer_id, customer_claim)
    VALUES (${tenantId}, gen_random_uuid(), ${String(form.id)}, ${JSON.stringify({ guests: 12, note: 'ünïcode \n "quoted"', nested: { list: [1, 2.5, null] } })}::jsonb, gen_random_uuid(), 'acme')`.execute(
    source.owner,
  );
  await sql`
    INSERT INTO push_subscriptions (tenant_id, id, user_id, endpoint, p256dh, auth, label)
    VALUES (${tenantId}, gen_random_uuid(), ${maria}, 'https://push.example.com/abc', 'p256dh-key', 'auth-key', 'Phone')`.execute(
    source.owner,
  );
  await sql`
    INSERT INTO event_documents (tenant_id, id, event_id, object_key, filename, content_type, size_bytes)
    VALUES (${tenantId}, gen_random_uuid(), ${event}, 'docs/plan.pdf', 'plan.pdf', 'application/pdf', 12345)`.execute(
    source.owner,
  );
  await sql`
    INSERT INTO shift_reminders (tenant_id, assignment_id) VALUES (${tenantId}, ${seat.id})`.execute(
    source.owner,
  );
}

beforeAll(async () => {
  issuer = await openDevIssuer(mkdtempSync(path.join(tmpdir(), 'tenant-import-')), { create: true });
  source = await openTestDatabase();
  opened.push(source);
  app = await buildApp({ db: source.db, verifier: issuer.verifier, geocoder: noGeocoder });
  await seedDemo(app, issuer, { now: new Date() });
  tenantId = claimToUuid(issuer.issuer, DEMO_TENANT);
  await moreThanTheDemo();
  const response = await as('demo-admin', 'GET', '/api/v1/tenant/export');
  expect(response.statusCode, response.body).toBe(200);
  archive = response.rawPayload;
}, 120_000);

afterAll(async () => {
  await app?.close();
  for (const db of opened) await db.dispose();
});

describe('importTenant', () => {
  it('brings every row of every table back, ids and all, into an empty database', async () => {
    const before = await tenantRows(source.owner, tenantId);
    // Every table has rows to compare.
    expect(Object.entries(before).filter(([, rows]) => rows.length === 0)).toEqual([]);
    const target = await emptyDatabase();
    const result = await importTenant(target.owner, Readable.from([archive]));
    expect(result.tenantId).toBe(tenantId);
    const after = await tenantRows(target.owner, tenantId);
    expect(after).toEqual(before);
    expect(rowCount(after)).toBe(Object.values(result.rows).reduce((n, rows) => n + rows, 0));
    expect(await ledgerMismatches(target.owner)).toEqual([]);
  });

  it('leaves the other tenants of the database as they were, and the app goes on with the imported one', async () => {
    const target = await emptyDatabase();
    const other = await layDownEventTenant(target.owner);
    const theirs = await tenantRows(target.owner, other.tenant);
    await importTenant(target.owner, Readable.from([archive]));
    expect(await tenantRows(target.owner, other.tenant)).toEqual(theirs);
    // The audit log's sequence moved past the imported entries: a new change records anew.
    const moved = await buildApp({ db: target.db, verifier: issuer.verifier, geocoder: noGeocoder });
    try {
      const role = await as('demo-admin', 'POST', '/api/v1/roles', { name: 'Cloakroom' }, moved);
      expect(role.statusCode, role.body).toBe(201);
      const users = await as('demo-admin', 'GET', '/api/v1/users', undefined, moved);
      expect((users.json() as unknown[]).length).toBe(demoPeople.length);
    } finally {
      await moved.close();
    }
    expect(await ledgerMismatches(target.owner)).toEqual([]);
  });

  it('imports an archive of an older schema than the database has', async () => {
    const older = await withManifest((manifest) => {
      manifest.schema_version = MIGRATION_NAMES.at(-2);
    });
    const target = await emptyDatabase();
    const result = await importTenant(target.owner, Readable.from([older]));
    expect(result.tenantId).toBe(tenantId);
    expect(await tenantRows(target.owner, tenantId)).toEqual(await tenantRows(source.owner, tenantId));
  });

  describe('refuses, writing nothing', () => {
    async function refused(
      bytes: Buffer,
      into?: TestDatabase,
    ): Promise<{ message: string; db: TestDatabase }> {
      const db = into ?? (await emptyDatabase());
      const before = rowCount(await tenantRows(db.owner, tenantId));
      const error = await importTenant(db.owner, Readable.from([bytes])).then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(ImportRefused);
      expect(rowCount(await tenantRows(db.owner, tenantId))).toBe(before);
      return { message: (error as Error).message, db };
    }

    it('a tenant that has rows here already (the same archive twice)', async () => {
      const target = await emptyDatabase();
      await importTenant(target.owner, Readable.from([archive]));
      const { message } = await refused(archive, target);
      expect(message).toMatch(
        new RegExp(`^tenant ${tenantId} is not empty here \\(\\w+ holds rows of it\\)$`),
      );
    });

    it('an archive of a newer schema than this scheduler knows', async () => {
      const newer = await withManifest((manifest) => {
        manifest.schema_version = '0099_from_the_future';
      });
      const { message } = await refused(newer);
      expect(message).toBe(
        `the archive's schema (0099_from_the_future) is newer than this scheduler's (${SCHEMA_VERSION}): upgrade the scheduler, run npm run migrate -w scheduler, then import`,
      );
    });

    it('a database without the migrations table (never migrated), on either database', async () => {
      const bare = await emptyDatabase();
      await sql`DROP TABLE kysely_migration`.execute(bare.owner);
      const { message } = await refused(archive, bare);
      expect(message).toBe(
        'the database has no scheduler schema (never migrated): run npm run migrate -w scheduler with the same settings first',
      );
    });

    it('a database behind this scheduler: its last migration not applied', async () => {
      const behind = await emptyDatabase();
      await sql`DELETE FROM kysely_migration WHERE name = ${SCHEMA_VERSION}`.execute(behind.owner);
      const { message } = await refused(archive, behind);
      expect(message).toBe(
        `the database's schema is older than this scheduler's (1 migrations pending, up to ${SCHEMA_VERSION}): run npm run migrate -w scheduler with the same settings first`,
      );
    });

    it('a database a newer release migrated', async () => {
      const ahead = await emptyDatabase();
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('0099_from_the_future', now()::text)`.execute(
        ahead.owner,
      );
      const { message } = await refused(archive, ahead);
      expect(message).toBe(
        `the database's schema (0099_from_the_future) is newer than this scheduler's (${SCHEMA_VERSION}): import with the release that migrated it`,
      );
    });

    it('a row of another tenant slipped into a table file', async () => {
      const files = await readArchive(archive);
      const lines = (files.get('tables/roles.jsonl')?.toString() ?? '').split('\n');
      const row = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
      row.tenant_id = '00000000-0000-4000-8000-000000000001';
      lines[0] = JSON.stringify(row);
      files.set('tables/roles.jsonl', Buffer.from(lines.join('\n')));
      const { message } = await refused(await packArchive(files));
      expect(message).toBe(`tables/roles.jsonl: a row of another tenant than ${tenantId}`);
    });

    it('a cut archive: a table with fewer rows than its manifest counts', async () => {
      const files = await readArchive(archive);
      const lines = (files.get('tables/shifts.jsonl')?.toString() ?? '').split('\n').filter(Boolean);
      files.set('tables/shifts.jsonl', Buffer.from(`${lines.slice(1).join('\n')}\n`));
      const { message } = await refused(await packArchive(files));
      expect(message).toBe(
        `tables/shifts.jsonl: ${lines.length - 1} rows, the manifest says ${lines.length} (a cut or altered archive)`,
      );
    });

    it('a row whose parent the archive lacks (a foreign key the import checks itself)', async () => {
      const files = await readArchive(archive);
      const manifest = JSON.parse(files.get('manifest.json')?.toString() ?? '{}') as {
        tables: { name: string; rows: number }[];
      };
      const locations = manifest.tables.find((table) => table.name === 'locations');
      if (!locations) throw new Error('no locations');
      locations.rows = 0;
      files.set('tables/locations.jsonl', Buffer.from(''));
      files.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
      const { message } = await refused(await packArchive(files));
      expect(message).toMatch(
        /^(events|shifts): \d+ rows refer to locations rows the archive lacks \(\w+\)$/,
      );
    });

    it('a file that is no tenant archive', async () => {
      const files = await readArchive(archive);
      files.delete('manifest.json');
      const { message } = await refused(await packArchive(files));
      expect(message).toBe('not a tenant archive: manifest.json is not its first file');
    });
  });
});

describe('npm run tenant -- import (the bundle, on an embedded database)', () => {
  const node = process.execPath;
  const schedulerDir = path.resolve(import.meta.dirname, '../..');
  const command = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    run(node, ['dist/cli/tenant.mjs', ...args], { cwd: schedulerDir, env }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it(
    'imports an archive file into DATA_DIR, then refuses it a second time with status 1',
    async () => {
      // The embedded database, also on the PostgreSQL run.
      const { DATABASE_URL: _url, DATABASE_OWNER_URL: _owner, ...rest } = process.env;
      const dataDir = mkdtempSync(path.join(tmpdir(), 'tenant-cli-'));
      const env: NodeJS.ProcessEnv = { ...rest, DATA_DIR: dataDir };
      await run(node, ['dist/cli/migrate.mjs'], { cwd: schedulerDir, env });
      const file = `${dataDir}.tar.gz`;
      writeFileSync(file, archive);
      const rows = rowCount(await tenantRows(source.owner, tenantId));
      const tables = (await tenantCatalogue(source.owner)).tables.length;
      const first = await command(env, 'import', file);
      expect(first).toMatchObject({
        code: 0,
        stdout: `imported tenant ${tenantId}: ${rows} rows in ${tables} tables\n`,
      });
      const second = await command(env, 'import', file);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(
        new RegExp(
          `^tenant: import refused, nothing written: tenant ${tenantId} is not empty here \\(\\w+ holds rows of it\\)\\n$`,
        ),
      );
      expect(await command(env, 'export', file)).toMatchObject({
        code: 2,
        stderr: 'usage: npm run tenant -w scheduler -- import <archive.tar.gz>\n',
      });
    },
    3 * PROCESS_START_MS,
  );

  it(
    'refuses a database that was never migrated: names the migrate command, status 1, no stack',
    async () => {
      const { DATABASE_URL: _url, DATABASE_OWNER_URL: _owner, ...rest } = process.env;
      const dataDir = mkdtempSync(path.join(tmpdir(), 'tenant-cli-unmigrated-'));
      const env: NodeJS.ProcessEnv = { ...rest, DATA_DIR: dataDir };
      const file = `${dataDir}.tar.gz`;
      writeFileSync(file, archive);
      expect(await command(env, 'import', file)).toMatchObject({
        code: 1,
        stdout: '',
        stderr:
          'tenant: import refused, nothing written: the database has no scheduler schema (never migrated): run npm run migrate -w scheduler with the same settings first\n',
      });
      // Still nothing there: the refusal migrated nothing and wrote nothing.
      await run(node, ['dist/cli/migrate.mjs'], { cwd: schedulerDir, env });
      expect(await command(env, 'import', file)).toMatchObject({ code: 0 });
    },
    3 * PROCESS_START_MS,
  );
});
