import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { EXCLUDED_TABLES, tenantCatalogue } from '../../src/tenant-export/tables.ts';
import { useTestDatabase } from '../support/database.ts';

/**
 * The archive's tables come from the catalogue: every tenant table is archived or left out
 * with a reason, a new one is archived without anyone listing it, and parents come first.
 */
const handle = useTestDatabase();

describe('tenantCatalogue', () => {
  it('accounts for every tenant table: archived, or excluded with a reason that names a table', async () => {
    const catalogue = await tenantCatalogue(handle.db);
    expect(catalogue.unaccounted).toEqual([]);
    expect(catalogue.excluded).toEqual(Object.keys(EXCLUDED_TABLES).sort());
    const archived = catalogue.tables.map((table) => table.name);
    expect(archived).toContain('tenants');
    expect(archived).toContain('audit_log');
    expect(archived).toContain('overtime_ledger');
    for (const name of catalogue.excluded) expect(archived).not.toContain(name);
  });

  it('puts every table after the tables it references', async () => {
    const catalogue = await tenantCatalogue(handle.db);
    const position = new Map(catalogue.tables.map((table, index) => [table.name, index]));
    expect(catalogue.foreignKeys.length).toBeGreaterThan(10);
    for (const fk of catalogue.foreignKeys) {
      if (fk.parent === fk.table) continue;
      expect({
        fk: fk.name,
        before: (position.get(fk.parent) ?? 99) < (position.get(fk.table) ?? -1),
      }).toEqual({
        fk: fk.name,
        before: true,
      });
    }
  });

  it('archives a tenant table a later migration adds without being told; one without a key is unaccounted', async () => {
    await sql`CREATE TABLE later_things (tenant_id uuid NOT NULL REFERENCES tenants(id), id uuid, PRIMARY KEY (tenant_id, id))`.execute(
      handle.owner,
    );
    await sql`CREATE TABLE later_keyless (tenant_id uuid NOT NULL, note text)`.execute(handle.owner);
    try {
      const catalogue = await tenantCatalogue(handle.owner);
      const later = catalogue.tables.find((table) => table.name === 'later_things');
      expect(later).toMatchObject({
        tenantColumn: 'tenant_id',
        key: ['tenant_id', 'id'],
        columns: ['tenant_id', 'id'],
      });
      const names = catalogue.tables.map((table) => table.name);
      expect(names.indexOf('tenants')).toBeLessThan(names.indexOf('later_things'));
      expect(catalogue.unaccounted).toEqual(['later_keyless']);
    } finally {
      await sql`DROP TABLE later_things, later_keyless`.execute(handle.owner);
    }
  });

  it('names identity columns, which the import writes as they were', async () => {
    const catalogue = await tenantCatalogue(handle.db);
    const audit = catalogue.tables.find((table) => table.name === 'audit_log');
    expect(audit?.identity).toEqual(['seq']);
    expect(audit?.key).toEqual(['tenant_id', 'seq']);
  });
});
