import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { sql } from 'kysely';
import { pack as tarPack } from 'tar-stream';
import type { Identity } from '../auth/identity.ts';
import { shiftsCalendar } from '../calendar/ics.ts';
import { feedEntries } from '../calendar/repository.ts';
import type { Deps } from '../deps.ts';
import { exportBalances, exportEntries } from '../time-tracking/service.ts';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  MANIFEST_FILE,
  type Manifest,
  SCHEMA_VERSION,
} from './archive.ts';
import { spoolSnapshot } from './snapshot.ts';
import { EXCLUDED_TABLES } from './tables.ts';

/** How far back the calendars reach, as the feed does (calendar/service.ts). */
const CALENDAR_HISTORY_DAYS = 90;
/** The payroll CSV covers the last year (the longest period the time-tracking export allows). */
const PAYROLL_DAYS = 366;

export interface TenantArchive {
  filename: string;
  body: Readable;
  /** What it holds, for the log line that records the export: tables, their rows, other files. */
  tables: number;
  rows: number;
  documents: number;
}

/**
 * The caller's tenant as one archive (archive.ts). The rows are read in one read-only
 * snapshot (a REPEATABLE READ transaction: the files agree with one another, whatever
 * changes meanwhile), page by page in primary-key order, and spooled to a temporary folder;
 * the archive is then packed and compressed while the client downloads it, and the folder
 * removed once the download ends or is cut. So memory holds a page, and the snapshot lasts
 * as long as the database takes to read the tenant, not as long as the client takes to
 * download it (on the embedded database, other requests wait for the snapshot's end).
 */
export async function exportTenant(deps: Deps, caller: Identity): Promise<TenantArchive> {
  const dir = await mkdtemp(join(tmpdir(), 'tenant-export-'));
  try {
    const exportedAt = deps.clock.now();
    const tables = await spoolSnapshot(deps.db, caller.tenantId, dir);
    const payroll = await timeTrackingOn(deps, caller.tenantId);
    const documents = [
      ...(payroll ? await spoolPayroll(deps, caller, dir, exportedAt) : []),
      ...(await spoolCalendars(deps, caller.tenantId, dir, exportedAt)),
    ];
    const manifest: Manifest = {
      format: ARCHIVE_FORMAT,
      format_version: ARCHIVE_FORMAT_VERSION,
      tenant_id: caller.tenantId,
      exported_at: exportedAt.toISOString(),
      schema_version: SCHEMA_VERSION,
      tables,
      excluded: Object.fromEntries(Object.entries(EXCLUDED_TABLES).sort(([a], [b]) => a.localeCompare(b))),
      documents,
      excluded_documents: payroll ? {} : { 'payroll/': PAYROLL_OFF },
    };
    await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const files = [MANIFEST_FILE, ...tables.map((table) => table.file), ...documents];
    const day = exportedAt.toISOString().slice(0, 10);
    return {
      filename: `tenant-${caller.tenantId}-${day}.tar.gz`,
      body: packed(dir, files),
      tables: tables.length,
      rows: tables.reduce((sum, table) => sum + table.rows, 0),
      documents: documents.length,
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Why the payroll CSVs are not in the archive of a tenant with time tracking switched off. */
const PAYROLL_OFF = 'time tracking is switched off for this tenant: its payroll CSVs are not offered';

/**
 * Whether the tenant has time tracking switched on. Off, its payroll downloads answer 404
 * (the feature is absent), so the archive offers no payroll CSVs either; the rows of the
 * time recorded are data and stay in tables/ all the same.
 */
async function timeTrackingOn(deps: Deps, tenantId: string): Promise<boolean> {
  const { rows } = await sql<{ on: boolean }>`
    SELECT time_tracking_enabled AS "on" FROM tenant_settings WHERE tenant_id = ${tenantId}`.execute(deps.db);
  return rows[0]?.on === true;
}

/** The payroll CSVs an admin downloads (time-tracking/): the last year's entries and the balances. */
async function spoolPayroll(deps: Deps, caller: Identity, dir: string, now: Date): Promise<string[]> {
  const day = 24 * 60 * 60 * 1000;
  const to = new Date(now.getTime() + day).toISOString().slice(0, 10);
  const from = new Date(now.getTime() + day - PAYROLL_DAYS * day).toISOString().slice(0, 10);
  const names: string[] = [];
  for (const file of [await exportEntries(deps, caller, { from, to }), await exportBalances(deps, caller)]) {
    const name = `payroll/${file.filename}`;
    await mkdir(join(dir, 'payroll'), { recursive: true });
    await pipeline(file.body, createWriteStream(join(dir, name)));
    names.push(name);
  }
  return names;
}

/**
 * The calendar each user with a calendar address opens (calendar/): the same feed, one file
 * per user, named by the user's id. One user's feed is in memory at a time.
 */
async function spoolCalendars(deps: Deps, tenantId: string, dir: string, now: Date): Promise<string[]> {
  const owners = await sql<{ user_id: string; role: string; display_name: string | null; timezone: string }>`
    SELECT c.user_id, u.role, u.display_name, s.timezone
      FROM calendar_tokens c
      JOIN users u ON u.tenant_id = c.tenant_id AND u.id = c.user_id
      JOIN tenant_settings s ON s.tenant_id = c.tenant_id
     WHERE c.tenant_id = ${tenantId} AND u.active
     ORDER BY c.user_id`.execute(deps.db);
  const since = new Date(now.getTime() - CALENDAR_HISTORY_DAYS * 24 * 60 * 60 * 1000);
  const names: string[] = [];
  for (const owner of owners.rows) {
    const entries = await feedEntries(deps.db, tenantId, owner.user_id, since, owner.role !== 'admin');
    const name = `calendars/${owner.user_id}.ics`;
    await mkdir(join(dir, 'calendars'), { recursive: true });
    const title = owner.display_name ? `Shifts of ${owner.display_name}` : 'Shifts';
    await writeFile(join(dir, name), shiftsCalendar(title, owner.timezone, entries));
    names.push(name);
  }
  return names;
}

/**
 * The spooled files as a tar.gz stream, packed as the client reads (one file open at a
 * time); the folder is removed when the stream ends, fails or is destroyed (a client gone).
 * A client that goes away midway leaves a file half read: it is closed with the pack, or
 * its descriptor would keep the removed file (and its secrets) on disk for the life of
 * the process.
 */
function packed(dir: string, files: string[]): Readable {
  const tar = tarPack();
  const out = new PassThrough();
  let reading: ReadStream | null = null;
  // Before the pipeline's own listeners: the pack is destroyed here without an error, so
  // none is raised after the pipeline has stopped listening (an uncaught error).
  out.once('close', () => {
    reading?.destroy();
    tar.destroy();
    void rm(dir, { recursive: true, force: true });
  });
  void (async () => {
    for (const name of files) {
      if (out.destroyed) return;
      const path = join(dir, name);
      const { size } = await stat(path);
      await new Promise<void>((resolve, reject) => {
        const input = createReadStream(path);
        reading = input;
        // Called back once the entry is written, or with an error when the pack is destroyed.
        const entry = tar.entry({ name, size, mtime: new Date(0) }, (error) => {
          input.destroy();
          if (error) reject(error);
          else resolve();
        });
        input.once('error', (error) => entry.destroy(error));
        input.pipe(entry);
      });
    }
    reading = null;
    tar.finalize();
  })().catch((error: unknown) => tar.destroy(error instanceof Error ? error : new Error(String(error))));
  pipeline(tar, createGzip(), out).catch(() => out.destroy());
  return out;
}
