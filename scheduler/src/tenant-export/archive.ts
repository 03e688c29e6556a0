import { migrations } from '../db/migrations/index.ts';

/**
 * The tenant archive's format (docs/scheduler/api.md, "Tenant archive"): a gzip-compressed
 * tar of `manifest.json` first, then one JSON Lines file per table under `tables/`, each
 * line one row as PostgreSQL's `to_jsonb` writes it, and the files people open (`payroll/`,
 * `calendars/`), which the import ignores.
 */
export const ARCHIVE_FORMAT = 'scheduler-tenant-archive';
export const ARCHIVE_FORMAT_VERSION = 1;

/** The schema the archive's rows follow: the name of the last migration. */
export const SCHEMA_VERSION: string = Object.keys(migrations).at(-1) ?? 'none';

/** Migration names in order: how two schema versions compare. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrations);

export interface ManifestTable {
  name: string;
  /** The path of its rows in the archive: tables/<name>.jsonl. */
  file: string;
  rows: number;
  /** The columns each row holds (the import writes these; later columns take their defaults). */
  columns: string[];
}

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  format_version: number;
  /** The tenant's id as the API writes ids: 32 hex digits. */
  tenant_id: string;
  exported_at: string;
  schema_version: string;
  /** Tables in the order they are imported (parents first). */
  tables: ManifestTable[];
  /** Tenant tables left out, with why. */
  excluded: Record<string, string>;
  /** The other files (CSV, iCalendar), for people; the import ignores them. */
  documents: string[];
  /** Kinds of those files left out of this archive (by folder), each with why; empty: none. */
  excluded_documents: Record<string, string>;
}

export const MANIFEST_FILE = 'manifest.json';
export const tableFile = (table: string) => `tables/${table}.jsonl`;
