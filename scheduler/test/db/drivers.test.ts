import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import type { Db } from '../../src/db/database.ts';
import { MAX_STATEMENT_PARAMETERS, TooManyParametersError } from '../../src/db/drivers.ts';
import { asBackground } from '../../src/db/lanes.ts';
import { asCaller, asTenant } from '../../src/db/tenant-scope.ts';
import { type FileDatabase, useTestDatabase } from '../support/database.ts';
import { EMBEDDED_ONLY, NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * The drivers every statement passes through (src/db/drivers.ts), on this file's own
 * database: the bound on a statement's bind parameters, on the application's view and
 * the owner's alike; an array, the way many values travel, is one parameter. And the
 * embedded session's turns: a statement is answered there in this thread without I/O, so
 * a chain of awaited statements must still let the event loop run its timers and sockets
 * between them, or one background chain holds every request of every tenant (on
 * PostgreSQL every answer arrives as I/O, so those tests hold there too).
 */
const handle = useTestDatabase();

const views = (): [string, Db][] => [
  ['application', handle.db],
  ['owner', handle.owner],
];

/** A statement of `count` bind parameters that answers how many it got. */
const counting = (count: number) =>
  sql<{ n: number }>`SELECT cardinality(ARRAY[${sql.join(
    Array.from({ length: count }, (_, i) => sql`${i}::int`),
  )}]) AS n`;

describe('the bound on bind parameters', () => {
  it('is 1,000', () => {
    expect(MAX_STATEMENT_PARAMETERS).toBe(1000);
  });

  it.each(['application', 'owner'])('sends a statement of exactly the bound (%s view)', async (view) => {
    const db = new Map(views()).get(view) as Db;
    const { rows } = await counting(MAX_STATEMENT_PARAMETERS).execute(db);
    expect(rows).toEqual([{ n: MAX_STATEMENT_PARAMETERS }]);
  });

  it.each(['application', 'owner'])(
    'refuses one more before it is sent (%s view): the transaction around it goes on',
    async (view) => {
      const db = new Map(views()).get(view) as Db;
      const failure = await db.transaction().execute(async (trx) => {
        const refused = await counting(MAX_STATEMENT_PARAMETERS + 1)
          .execute(trx)
          .then(
            () => null,
            (error: unknown) => error,
          );
        // Had the server refused it, the transaction would be aborted (25P02).
        const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(trx);
        expect(rows).toEqual([{ ok: 1 }]);
        return refused;
      });
      expect(failure).toBeInstanceOf(TooManyParametersError);
      expect(failure).toMatchObject({
        name: 'TooManyParametersError',
        parameters: MAX_STATEMENT_PARAMETERS + 1,
        message: `statement with ${MAX_STATEMENT_PARAMETERS + 1} bind parameters refused (at most ${MAX_STATEMENT_PARAMETERS}; pass lists as arrays): SELECT cardinality(ARRAY[$1::int, $2::int, $3::int, $4::int, $5::int, $6::int, $7::int, $8::int, $9::int, $10::int, $11:`,
      });
      expect((failure as { code?: unknown }).code).toBeUndefined();
    },
  );

  it('refuses a statement the query builder grew from a list (a long IN list)', async () => {
    const ids = Array.from({ length: MAX_STATEMENT_PARAMETERS + 1 }, () => randomUUID());
    const query = handle.owner.selectFrom('tenants').select('id').where('id', 'in', ids);
    await expect(query.execute()).rejects.toThrow(TooManyParametersError);
    // The same list as one array parameter.
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM tenants WHERE id = ANY(${ids}::uuid[])`.execute(handle.owner);
    expect(rows).toEqual([{ n: 0 }]);
  });

  it('refuses a streamed statement too', async () => {
    const ids = Array.from({ length: MAX_STATEMENT_PARAMETERS + 1 }, () => randomUUID());
    const stream = handle.owner.selectFrom('tenants').select('id').where('id', 'in', ids).stream();
    await expect(stream.next()).rejects.toThrow(TooManyParametersError);
  });
});

describe('an array as one parameter', () => {
  it('carry 65,536 ids (more than one statement could bind one by one) in one parameter, in their wire form or hyphenated', async () => {
    const ids = Array.from({ length: 65_536 }, () => randomUUID());
    const wire = ids.map((id) => id.replaceAll('-', ''));
    for (const [, db] of views()) {
      const { rows } = await sql<{ n: number; first: string; last: string }>`
        SELECT cardinality(${wire}::uuid[]) AS n, (${ids}::uuid[])[1] AS first,
               (${wire}::uuid[])[65536] AS last`.execute(db);
      expect(rows).toEqual([{ n: 65_536, first: wire[0], last: wire[65_535] }]);
    }
  });
});

/**
 * Runs one statement after another until `stop()` says so or `bound` statements ran;
 * answers how many ran.
 */
async function chain(db: FileDatabase['db'], stop: () => boolean, bound: number): Promise<number> {
  let count = 0;
  while (!stop() && count < bound) {
    await sql`SELECT 1`.execute(db);
    count++;
  }
  return count;
}

describe('a chain of statements', () => {
  it('lets a timer due meanwhile fire between two of them', async () => {
    let fired = false;
    setTimeout(() => {
      fired = true;
    }, 0);
    // Without a turn of the event loop between statements the timer fires only once the
    // chain has run all of them.
    const ran = await chain(handle.db, () => fired, 20_000);
    expect(fired).toBe(true);
    expect(ran).toBeLessThan(20_000);
  });

  it('lets the owner’s view and the application’s view take turns, each chain going on', async () => {
    let done = false;
    const app = chain(handle.db, () => done, 1_000_000);
    const owner = chain(handle.owner, () => done, 200);
    // The owner's chain ends by its bound while the application's goes on: both progressed.
    const ownerRan = await owner;
    done = true;
    expect(ownerRan).toBe(200);
    expect(await app).toBeGreaterThan(0);
  });

  it('lets a socket be answered while a chain runs', async () => {
    const { createServer, request } = await import('node:http');
    const server = createServer((_req, res) => res.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    let answered = false;
    const ping = new Promise<void>((resolve, reject) => {
      request({ host: '127.0.0.1', port }, (res) => {
        res.resume();
        res.on('end', () => {
          answered = true;
          resolve();
        });
      })
        .on('error', reject)
        .end();
    });
    const ran = await chain(handle.db, () => answered, 50_000);
    await ping;
    server.close();
    expect(ran).toBeLessThan(50_000);
  });
});

describe(
  'the embedded session shared by requests and background work',
  runsIf(inject('testDb') !== 'postgres', EMBEDDED_ONLY),
  () => {
    it('serves a request before the background statements that were waiting when it came', async () => {
      let done = false;
      let backgroundRan = 0;
      // Fifty background chains, each with a statement waiting for the session at any time;
      // each bounded, so a driver that never yields fails this test rather than hangs it.
      const chains = Array.from({ length: 50 }, () =>
        asBackground(async () => {
          for (let i = 0; i < 400 && !done; i++) {
            await sql`SELECT 1`.execute(handle.db);
            backgroundRan++;
          }
        }),
      );
      // Let every chain have a statement queued.
      while (backgroundRan < 100) await sql`SELECT 1`.execute(handle.db);
      const before = backgroundRan;
      await sql`SELECT 1`.execute(handle.db);
      const overtaken = backgroundRan - before;
      done = true;
      await Promise.all(chains);
      // In arrival order it would wait for all fifty; now for the loan in hand at most.
      expect(overtaken).toBeLessThanOrEqual(2);
    });

    it('still gives background work its share while requests keep the session busy', async () => {
      let done = false;
      let foregroundRan = 0;
      const requests = Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 1000 && !done; i++) {
          await sql`SELECT 1`.execute(handle.db);
          foregroundRan++;
        }
      });
      while (foregroundRan < 50) await new Promise((resolve) => setImmediate(resolve));
      let backgroundRan = 0;
      const before = foregroundRan;
      await asBackground(async () => {
        for (let i = 0; i < 10; i++) {
          await sql`SELECT 1`.execute(handle.db);
          backgroundRan++;
        }
      });
      const meanwhile = foregroundRan - before;
      done = true;
      await Promise.all(requests);
      expect(backgroundRan).toBe(10);
      // At most eight requests between two background loans (FOREGROUND_BURST), and one in hand.
      expect(meanwhile).toBeLessThanOrEqual(10 * 9);
    });
  },
);

describe(
  'the tenant told per transaction on PostgreSQL',
  runsIf(inject('testDb') === 'postgres', NEEDS_POSTGRES),
  () => {
    it('tells a statement outside a transaction its tenant, actor and UTC, and leaves nothing on the session', async () => {
      const tenant = randomUUID();
      const actor = randomUUID();
      const told = await asCaller(tenant, actor, () =>
        sql<{ tenant: string; actor: string; zone: string }>`
        SELECT current_setting('app.tenant_id') AS tenant, current_setting('app.actor_id') AS actor,
               current_setting('TimeZone') AS zone`.execute(handle.db),
      );
      // Told in the statement's own transaction (test/db/preluded-query.test.ts shows it is one).
      expect(told.rows).toEqual([{ tenant, actor, zone: 'UTC' }]);
      // Outside any scope: what the last statement was told is gone with its transaction.
      const after = await sql<{ tenant: string | null; actor: string | null }>`
      SELECT current_setting('app.tenant_id', true) AS tenant, current_setting('app.actor_id', true) AS actor`.execute(
        handle.db,
      );
      expect(after.rows).toEqual([{ tenant: '', actor: '' }]);
    });

    it('refuses to write a scope value that is not an id into the settings, sending nothing', async () => {
      const attempt = asTenant("x', true), set_config('role', 'postgres", () =>
        sql`SELECT 1`.execute(handle.db),
      );
      await expect(attempt).rejects.toThrow(/^refusing to send .* as a setting$/);
    });
  },
);
