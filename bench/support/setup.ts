import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import type { Insertable } from 'kysely';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { claimToUuid } from '../../scheduler/src/auth/identity.ts';
import { type DatabaseHandle, type Db, openDatabase } from '../../scheduler/src/db/database.ts';
import { MAX_STATEMENT_PARAMETERS } from '../../scheduler/src/db/drivers.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import type { Database } from '../../scheduler/src/db/types.ts';
import { Provisioner } from '../../scheduler/src/tenants/provisioning.ts';
import { provisionUser } from '../../scheduler/src/users/service.ts';
import { depsOver } from '../../scheduler/test/support/units.ts';

export const ISSUER = 'https://idp.bench.example';
export const AUDIENCE = 'scheduler-api';

/**
 * Benchmark identities use canonical UUIDs (hyphenated, not version 5) for tenant and
 * subject: the scheduler keeps such a claim as the id, and a floor server hands the same
 * text to PostgreSQL, so both read and write the same rows.
 */
export function canonicalId(): { claim: string; id: string } {
  const claim = uuidv7();
  return { claim, id: claim.replaceAll('-', '') };
}

export interface Signer {
  publicKeyPem: string;
  sign(claims: { tenant: string; subject: string; role: string }): Promise<string>;
}

export async function createSigner(): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return {
    publicKeyPem: await exportSPKI(publicKey),
    sign: ({ tenant, subject, role }) =>
      new SignJWT({ tenant_id: tenant, role })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(subject)
        .setExpirationTime('2h')
        .sign(privateKey),
  };
}

/** The environment both servers of a benchmark read. */
export function serverEnv(databaseUrl: string, signer: Signer): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PUBLIC_KEY_PEM: signer.publicKeyPem,
    ISSUER,
    AUDIENCE,
    POOL_SIZE: process.env.POOL_SIZE ?? '10',
  };
}

/** A tenant row with its settings, as provisioning would write it. */
export async function insertTenant(db: Db, tenantId: string): Promise<void> {
  await db
    .insertInto('tenants')
    .values({ id: tenantId, vapid_public_key: 'bench', vapid_private_key: 'bench' })
    .execute();
  await db.insertInto('tenant_settings').values({ tenant_id: tenantId }).execute();
}

/**
 * WALL=off measures the scheduler without its second wall between tenants: the
 * application role may then bypass row-level security (what the server itself refuses
 * to start with, which the benchmark's in-process server does not check).
 */
export async function applyWallSetting(owner: Db): Promise<void> {
  if (process.env.WALL === 'off') await sql`ALTER ROLE scheduler_app BYPASSRLS`.execute(owner);
}

/** What the run measured, for its heading: the wall and the verified-token memory, on or off. */
export function settingsLine(): string {
  return `wall ${process.env.WALL === 'off' ? 'off' : 'on'}, verified-token memory ${process.env.TOKEN_CACHE === 'off' ? 'off' : 'on'}`;
}

/**
 * Seed rows as a benchmark's setup writes them, in statements that stay under the
 * drivers' bound on bind parameters (MAX_STATEMENT_PARAMETERS): as many rows a statement
 * as fit.
 */
export async function insertRows<T extends keyof Database & string>(
  db: Db,
  table: T,
  rows: readonly Insertable<Database[T]>[],
): Promise<void> {
  const columns = Math.max(1, ...rows.map((row) => Object.keys(row).length));
  const perStatement = Math.max(1, Math.floor(MAX_STATEMENT_PARAMETERS / columns));
  for (let start = 0; start < rows.length; start += perStatement) {
    // Kysely's insert types per table do not narrow through a generic table name.
    await db
      .insertInto(table)
      .values(rows.slice(start, start + perStatement) as never)
      .execute();
  }
}

/**
 * The read benchmarks' database (GET /api/v1/roles): migrated, the wall setting applied,
 * one tenant with its admin `bench-admin` provisioned as the API provisions one, and 50
 * roles to list. Answers the handle open; the caller closes it.
 */
export async function openRolesDatabase(url: string, tenantId: string): Promise<DatabaseHandle> {
  const handle = await openDatabase({ url, poolSize: 2 });
  await migrateToLatest(handle.owner);
  await applyWallSetting(handle.owner);
  await new Provisioner(depsOver(handle.db), provisionUser).ensure({
    tenantId,
    userId: claimToUuid(ISSUER, 'bench-admin'),
    role: 'admin',
    customerId: null,
    customerClaim: null,
    issuer: ISSUER,
    name: null,
    email: null,
  });
  await handle.owner
    .insertInto('roles')
    .values(
      Array.from({ length: 50 }, (_, i) => ({
        tenant_id: tenantId,
        id: uuidv7(),
        name: `Role ${String(i).padStart(2, '0')}`,
        description: `Benchmark role number ${i}`,
      })),
    )
    .execute();
  return handle;
}
