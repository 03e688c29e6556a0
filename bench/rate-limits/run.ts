/**
 * bench/rate-limits: one tenant's script hammering the API while another tenant works as
 * people do, with the API's rate limits off, with the token buckets alone, and at their
 * defaults (200 at once and 20 a second per user, 1000 and 100 a second per tenant, kept
 * in the process, and 4 of a tenant's requests handled at once). The script is
 * SCRIPT_USERS users of one tenant, each on SCRIPT_CONNECTIONS connections sending
 * GET /api/v1/roles (ROLES roles, a list a script would pull) as fast as answers come
 * (autocannon); the other tenant's admin reads the same list as a person's screens do, 10
 * times a second on 2 connections. The figure is the other tenant's median and p99
 * latency under the script against its latency alone, per setting, measured once the
 * script has spent its tenant's burst.
 *
 *   npm run bench:rate-limits   (DURATION=10 ROUNDS=3 SCRIPT_USERS=8 SCRIPT_CONNECTIONS=4 ROLES=500 to change)
 */
import autocannon from 'autocannon';
import { openDatabase } from '../../scheduler/src/db/database.ts';
import { migrateToLatest } from '../../scheduler/src/db/migrate.ts';
import { startPgCluster } from '../../scheduler/test/support/pg-cluster.ts';
import { median, type Server, startServer, stopServer } from '../support/harness.ts';
import { canonicalId, createSigner, insertRows, insertTenant, serverEnv } from '../support/setup.ts';

const duration = Number(process.env.DURATION ?? 10);
const rounds = Number(process.env.ROUNDS ?? 3);
const scriptUsers = Number(process.env.SCRIPT_USERS ?? 8);
const scriptConnections = Number(process.env.SCRIPT_CONNECTIONS ?? 4);
const roleCount = Number(process.env.ROLES ?? 500);
/** The script's first seconds, before the other tenant is measured: its tenant's burst of 1000 spent. */
const settleSeconds = 5;

interface Latency {
  p50: number;
  p99: number;
  count: number;
  non2xx: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** The other tenant: 2 clients, each reading every 200 ms (or at once after a slower answer), for `seconds`. */
async function otherTenant(port: number, token: string, seconds: number): Promise<Latency> {
  const until = performance.now() + seconds * 1000;
  const times: number[] = [];
  let non2xx = 0;
  const client = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/roles`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await response.arrayBuffer();
      const took = performance.now() - started;
      times.push(took);
      if (response.status >= 300) non2xx++;
      if (took < 200) await new Promise((resolve) => setTimeout(resolve, 200 - took));
    }
  };
  await Promise.all([client(), client()]);
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), count: times.length, non2xx };
}

/** The script: every user on its connections, as fast as answers come; what it got. */
function script(port: number, tokens: string[], seconds: number) {
  const runs = tokens.map((token) =>
    autocannon({
      url: `http://127.0.0.1:${port}/api/v1/roles`,
      connections: scriptConnections,
      duration: seconds,
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  return Promise.all(runs).then((results) => ({
    served: results.reduce((sum, r) => sum + r['2xx'], 0) / seconds,
    refused: results.reduce((sum, r) => sum + (r.statusCodeStats?.['429']?.count ?? 0), 0) / seconds,
  }));
}

/**
 * The limits compared: none; the token buckets alone (turns too many to matter), as
 * before turns were added; and the defaults, buckets and turns (4 of a tenant's requests
 * at once, 100 waiting).
 */
const settings = {
  off: {},
  buckets: { RATE_LIMIT_STORE: 'process', RATE_LIMIT_TENANT_CONCURRENCY: '10000' },
  default: { RATE_LIMIT_STORE: 'process' },
} as const;
type Setting = keyof typeof settings;

interface Row {
  setting: Setting;
  alone: Latency;
  under: Latency;
  served: number;
  refused: number;
}

async function measure(
  setting: Row['setting'],
  env: NodeJS.ProcessEnv,
  other: string,
  scriptTokens: string[],
) {
  const server: Server = await startServer('app', {
    ...env,
    ...settings[setting],
  });
  try {
    await otherTenant(server.port, other, 1); // warm-up: JIT, pool, provisioning memo
    const alone = await otherTenant(server.port, other, duration);
    const load = script(server.port, scriptTokens, duration + settleSeconds + 1);
    // The script's first seconds spend its buckets' burst; measure once it runs steadily.
    await new Promise((resolve) => setTimeout(resolve, settleSeconds * 1000));
    const under = await otherTenant(server.port, other, duration);
    const { served, refused } = await load;
    return { setting, alone, under, served, refused };
  } finally {
    await stopServer(server);
  }
}

const cluster = await startPgCluster();
try {
  const handle = await openDatabase({ url: cluster.url, poolSize: 2 });
  await migrateToLatest(handle.owner);
  const [busy, quiet] = [canonicalId(), canonicalId()];
  for (const tenant of [busy, quiet]) {
    await insertTenant(handle.owner, tenant.id);
    await insertRows(
      handle.owner,
      'roles',
      Array.from({ length: roleCount }, (_, i) => ({
        tenant_id: tenant.id,
        id: canonicalId().id,
        name: `Role ${String(i).padStart(3, '0')}`,
      })),
    );
  }
  await handle.close();
  const signer = await createSigner();
  const other = await signer.sign({ tenant: quiet.claim, subject: canonicalId().claim, role: 'admin' });
  const scriptTokens = await Promise.all(
    Array.from({ length: scriptUsers }, () =>
      signer.sign({ tenant: busy.claim, subject: canonicalId().claim, role: 'admin' }),
    ),
  );
  const env = serverEnv(cluster.url, signer);

  // Rounds alternate the settings, so both see the same machine state.
  const rows: Row[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const setting of Object.keys(settings) as Setting[])
      rows.push(await measure(setting, env, other, scriptTokens));
  }
  console.log(
    `\nGET /api/v1/roles (${roleCount} roles); the script: ${scriptUsers} users of one tenant x ${scriptConnections} connections; the other tenant: 2 clients, a request every 200 ms each; ${duration} s, ${rounds} rounds`,
  );
  console.log(
    '| limits | other alone p50 / p99 ms | other under the script p50 / p99 ms | p50 ratio | p99 ratio | script served req/s | script refused (429) req/s |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.setting} | ${row.alone.p50.toFixed(1)} / ${row.alone.p99.toFixed(1)} | ${row.under.p50.toFixed(1)} / ${row.under.p99.toFixed(1)} | ${(row.under.p50 / row.alone.p50).toFixed(2)} | ${(row.under.p99 / row.alone.p99).toFixed(2)} | ${row.served.toFixed(0)} | ${row.refused.toFixed(0)} |`,
    );
    if (row.alone.non2xx || row.under.non2xx)
      throw new Error(`the other tenant was refused (${row.setting})`);
  }
  for (const setting of Object.keys(settings) as Setting[]) {
    const mine = rows.filter((row) => row.setting === setting);
    console.log(
      `limits ${setting}: the other tenant's latency under the script / alone, median of ${rounds} rounds: p50 ${median(mine.map((r) => r.under.p50 / r.alone.p50)).toFixed(2)}, p99 ${median(mine.map((r) => r.under.p99 / r.alone.p99)).toFixed(2)}`,
    );
  }
} finally {
  cluster.stop();
}
