import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { asCaller, asTenant } from '../../src/db/tenant-scope.ts';
import { newId } from '../../src/ids.ts';
import { useRouteTests } from '../support/context.ts';
import { refusalCode } from '../support/database.ts';
import { newRole } from '../support/scheduling.ts';

/**
 * The audit log in the database itself (migration 0015), with raw SQL past every service:
 * the application's role may read and append but never change or remove a row, a change
 * that rolls back takes its audit row with it, and a table attached with one statement is
 * recorded with its secrets redacted. Runs on PGlite and, with TEST_DB=postgres, on
 * PostgreSQL.
 */
const t = useRouteTests();

/** What a unit of work does to name its action (src/changes/unit-of-work.ts), in raw SQL. */
const nameAction = (db: Parameters<ReturnType<typeof sql>['execute']>[0], action: string) =>
  sql`SELECT set_config('app.audit_action', ${action}, true)`.execute(db);

interface Row {
  actor_user_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  changes: { before: Record<string, unknown>; after: Record<string, unknown> };
}

const rowsOf = (targetId: string) =>
  sql<Row>`SELECT actor_user_id, action, target_type, target_id, changes FROM audit_log
           WHERE target_id = ${targetId} ORDER BY seq`.execute(t.ctx.db.db);

describe('the audit log for the application’s role', () => {
  it('refuses to change or remove a row, its own tenant’s included', async () => {
    const roleId = await newRole(t.admin, 'Audited');
    const db = t.ctx.db.db;
    await asTenant(t.admin.tenantId, async () => {
      expect((await rowsOf(roleId)).rows).toHaveLength(1);
      for (const statement of [
        sql`UPDATE audit_log SET action = 'role.forged' WHERE target_id = ${roleId}`,
        sql`UPDATE audit_log SET changes = '{}' WHERE target_id = ${roleId}`,
        sql`DELETE FROM audit_log WHERE target_id = ${roleId}`,
        sql`TRUNCATE audit_log`,
        sql`ALTER TABLE audit_log DISABLE TRIGGER ALL`,
        sql`ALTER TABLE roles DISABLE TRIGGER audit`,
        sql`DROP TRIGGER audit ON roles`,
      ]) {
        expect(await refusalCode(statement.execute(db))).toBe('42501');
      }
      // Appending as another tenant is refused by the tenant wall.
      expect(
        await refusalCode(
          sql`INSERT INTO audit_log (tenant_id, id, action, target_type, target_id, changes)
              VALUES (${t.otherAdmin.tenantId}, gen_random_uuid(), 'role.forged', 'role', ${roleId}, '{}')`.execute(
            db,
          ),
        ),
      ).toBe('42501');
      expect((await rowsOf(roleId)).rows.map((row) => row.action)).toEqual(['role.created']);
    });
  });

  it('keeps no row of a change that rolled back', async () => {
    const roleId = newId();
    const db = t.ctx.db.db;
    await asCaller(t.admin.tenantId, t.admin.userId, async () => {
      const seen = await db
        .transaction()
        .execute(async (trx) => {
          await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${t.admin.tenantId}, ${roleId}, 'Gone')`.execute(
            trx,
          );
          const inside = await sql<Row>`SELECT action FROM audit_log WHERE target_id = ${roleId}`.execute(
            trx,
          );
          throw Object.assign(new Error('roll back'), { inside: inside.rows });
        })
        .catch((error: { inside?: unknown }) => error.inside);
      expect(seen).toEqual([{ action: 'role.created' }]);
      expect((await rowsOf(roleId)).rows).toEqual([]);
    });
  });

  it('records the caller as actor and the action the transaction named, for its type only', async () => {
    const roleId = newId();
    const db = t.ctx.db.db;
    await asCaller(t.admin.tenantId, t.admin.userId, () =>
      db.transaction().execute(async (trx) => {
        await nameAction(trx, 'role.drafted');
        await sql`INSERT INTO roles (tenant_id, id, name) VALUES (${t.admin.tenantId}, ${roleId}, 'Named')`.execute(
          trx,
        );
        await nameAction(trx, 'shift.published');
        await sql`UPDATE roles SET description = 'Renamed' WHERE id = ${roleId}`.execute(trx);
      }),
    );
    // The setting ended with the transaction: this delete is named plainly, by the system.
    await asTenant(t.admin.tenantId, () => sql`DELETE FROM roles WHERE id = ${roleId}`.execute(db));
    const rows = await asTenant(t.admin.tenantId, () => rowsOf(roleId));
    expect(rows.rows.map((row) => [row.action, row.actor_user_id])).toEqual([
      ['role.drafted', t.admin.userId],
      ['role.updated', t.admin.userId],
      ['role.deleted', null],
    ]);
    expect(rows.rows[1]?.changes).toEqual({
      before: { description: null },
      after: { description: 'Renamed' },
    });
  });

  it('records a table attached with one statement, never its secrets, skipping ignored columns', async () => {
    const owner = t.ctx.db.owner;
    const table = `audit_probe_${newId().slice(0, 8)}`;
    await sql
      .raw(`CREATE TABLE ${table} (tenant_id uuid NOT NULL, id uuid NOT NULL, name text, secret text,
              signing_secret text, vapid_private_key text, touched_at timestamptz, PRIMARY KEY (tenant_id, id))`)
      .execute(owner);
    await sql.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO scheduler_app`).execute(owner);
    await sql
      .raw(`CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW
              EXECUTE FUNCTION audit_row('probe', 'touched_at')`)
      .execute(owner);
    const id = newId();
    const db = t.ctx.db.db;
    try {
      await asCaller(t.admin.tenantId, t.admin.userId, async () => {
        await sql
          .raw(`INSERT INTO ${table} VALUES ('${t.admin.tenantId}', '${id}', 'Hook', 's3cr3t', 'whsec_x', 'key',
                  '2026-11-26T10:00:00.5+01:00')`)
          .execute(db);
        await sql.raw(`UPDATE ${table} SET touched_at = now()`).execute(db);
        await sql.raw(`UPDATE ${table} SET secret = 'other', name = 'Hooked'`).execute(db);
        const rows = (await rowsOf(id)).rows;
        expect(rows).toEqual([
          {
            actor_user_id: t.admin.userId,
            action: 'probe.created',
            target_type: 'probe',
            target_id: id,
            changes: {
              before: {},
              after: {
                id,
                name: 'Hook',
                secret: '[redacted]',
                signing_secret: '[redacted]',
                vapid_private_key: '[redacted]',
              },
            },
          },
          {
            actor_user_id: t.admin.userId,
            action: 'probe.updated',
            target_type: 'probe',
            target_id: id,
            changes: {
              before: { name: 'Hook', secret: '[redacted]' },
              after: { name: 'Hooked', secret: '[redacted]' },
            },
          },
        ]);
      });
    } finally {
      await sql.raw(`DROP TABLE ${table}`).execute(owner);
    }
  });

  it('writes instants and ids as the API does', async () => {
    const roleId = await newRole(t.admin, 'Wire');
    const [row] = (await asTenant(t.admin.tenantId, () => rowsOf(roleId))).rows;
    const createdAt = String(row?.changes.after.created_at);
    expect(createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(row?.changes.after.id).toBe(roleId);
  });
});
