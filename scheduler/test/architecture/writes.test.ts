import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { KyselyPlugin, OperationNode, QueryId, RootOperationNode, Transaction } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.ts';
import type { Database } from '../../src/db/types.ts';
import type { ObjectStorage } from '../../src/storage/object-storage.ts';
import { type Caller, type Method, uniqueName, useTestContext } from '../support/context.ts';

/**
 * Every write of a service runs through the unit of work (src/changes/unit-of-work.ts):
 * docs/architecture.md, "One unit of work". Held twice:
 *
 * - In the sources: the unit of work is the only code on a request's path that opens a
 *   transaction (the background work named below keeps its own), and no service hands
 *   `deps.db` to a repository function that writes. A reading of the text, which the
 *   services' one idiom makes reliable (`(deps, caller, input)`, the database passed as
 *   `deps.db` or as the unit's `tx.db`); it cannot follow a database passed on under
 *   another name, which the tour below does.
 * - In what the API does: an app whose database reports, for every statement, whether it
 *   ran inside a transaction is taken through every write route it has (the tour fails
 *   while a write route is missing from it); every statement that writes or locks rows
 *   ran inside one, and so, by the first check, inside a unit of work.
 */
const src = path.resolve(import.meta.dirname, '../../src');
const read = (file: string) => readFileSync(path.join(src, file), 'utf8');

/** Every .ts file under src/, relative to it. */
const sources = (readdirSync(src, { recursive: true }) as string[])
  .filter((file) => file.endsWith('.ts') && !file.startsWith(`db${path.sep}migrations`))
  .map((file) => file.split(path.sep).join('/'))
  .sort();

/** The modules that make the services' writes: the services, bulk generation and provisioning. */
const writers = sources.filter(
  (file) =>
    /^[a-z-]+\/service\.ts$/.test(file) ||
    file === 'shifts/generation.ts' ||
    file === 'shifts/publication.ts' ||
    file === 'tenants/provisioning.ts',
);

/**
 * Where a transaction may be opened: the unit of work, and background work that is no
 * service (a webhook's delivery job; the form submissions counted in the database, a
 * count taken before the submission it guards is written).
 */
const transactionOpeners: Record<string, string> = {
  'changes/unit-of-work.ts': 'the unit of work',
  'webhooks/repository.ts': 'the delivery job of a webhook (webhooks/delivery.ts)',
  'forms/shared-submit-limit.ts': 'the submit limiter counting in the database',
  'tenant-export/snapshot.ts':
    "the export's snapshot: one read-only REPEATABLE READ transaction over every table",
  'tenant-export/import.ts':
    "the operator's import of an archive: one transaction as the owner, triggers off, records no change",
};

/**
 * The functions of a repository that write rows: those whose body has a statement that
 * does, and those that call one of them. The file is cut at each top-level declaration.
 */
function writingFunctions(file: string): string[] {
  const bodies = new Map<string, string>();
  for (const declaration of read(file).split(
    /\n(?=(?:export )?(?:async )?(?:function|const|let|type|interface) )/,
  )) {
    const name = /^(?:export )?(?:async )?function (\w+)/.exec(declaration)?.[1];
    if (name) bodies.set(name, declaration);
  }
  const statement =
    /\.(insertInto|updateTable|deleteFrom|mergeInto)\(|\b(INSERT INTO|DELETE FROM)\b|\bUPDATE \w+( \w+)? SET\b/;
  const writing = new Set([...bodies].filter(([, body]) => statement.test(body)).map(([name]) => name));
  for (let grown = true; grown; ) {
    grown = false;
    for (const [name, body] of bodies) {
      if (writing.has(name) || ![...writing].some((writer) => new RegExp(`\\b${writer}\\(`).test(body)))
        continue;
      writing.add(name);
      grown = true;
    }
  }
  return [...writing];
}

describe('the writes of the services, in the sources', () => {
  it('open transactions only in the unit of work (and the background work named)', () => {
    const opening = sources.filter((file) => /\.transaction\(\)/.test(read(file)));
    expect(opening).toContain('changes/unit-of-work.ts');
    expect(opening.filter((file) => !(file in transactionOpeners))).toEqual([]);
    expect(writers.filter((file) => read(file).includes('.transaction('))).toEqual([]);
  });

  it('hand a repository function that writes only the unit’s database, never deps.db', () => {
    const writing = new Set(
      sources.filter((file) => file.endsWith('/repository.ts')).flatMap(writingFunctions),
    );
    // The reading of the repositories finds what they write with.
    for (const name of ['insertRole', 'takeSeat', 'payOut', 'insertTenant', 'upsertUser', 'markAllRead'])
      expect(writing).toContain(name);
    const handed: string[] = [];
    let throughUnits = 0;
    for (const file of writers) {
      for (const call of read(file).matchAll(/\b(\w+)\(\s*((?:this\.)?deps\.db|tx\.db|trx)\b/g)) {
        if (!writing.has(call[1] ?? '')) continue;
        if (call[2]?.endsWith('deps.db')) handed.push(`${file}: ${call[1]}(${call[2]}, …)`);
        else throughUnits += 1;
      }
    }
    expect(handed).toEqual([]);
    expect(throughUnits).toBeGreaterThan(40);
  });
});

/** What a statement does to rows: writes them, locks them, or only reads. */
type Effect = 'write' | 'lock' | 'read';

interface Run {
  effect: Effect;
  /** The kind of statement and the tables it names, for the failure message. */
  what: string;
  /** The transaction it ran in (numbered as they were opened), or null. */
  transaction: number | null;
}

const writeNodes = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);
const lockModifiers = new Set(['ForUpdate', 'ForNoKeyUpdate', 'ForShare', 'ForKeyShare']);

function rawEffect(text: string): Effect {
  if (/\b(insert\s+into|delete\s+from)\b|\bupdate\s+\w+(\s+\w+)?\s+set\b/i.test(text)) return 'write';
  if (/\bfor\s+(no\s+key\s+)?update\b|\bfor\s+(key\s+)?share\b/i.test(text)) return 'lock';
  return 'read';
}

/** The effect of a statement, from every node in it (a write may sit in a CTE or in raw SQL). */
function runOf(node: RootOperationNode): Run {
  let effect: Effect = 'read';
  const tables = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) {
      for (const child of value) visit(child);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const child = value as OperationNode & Record<string, unknown>;
    if (writeNodes.has(child.kind)) effect = 'write';
    if (child.kind === 'SelectModifierNode' && lockModifiers.has(String(child.modifier)) && effect === 'read')
      effect = 'lock';
    if (child.kind === 'RawNode') {
      const text = ((child.sqlFragments as readonly string[] | undefined) ?? []).join(' ');
      const raw = rawEffect(text);
      if (raw === 'write' || (raw === 'lock' && effect === 'read')) effect = raw;
      for (const match of text.matchAll(/\b(?:FROM|UPDATE|INTO|JOIN)\s+([a-z_][a-z0-9_]*)/gi))
        tables.add(String(match[1]).toLowerCase());
    }
    if (child.kind === 'TableNode') {
      const name = (child.table as { identifier?: { name?: string } } | undefined)?.identifier?.name;
      if (name) tables.add(name);
    }
    for (const grandchild of Object.values(child)) visit(grandchild);
  };
  visit(node);
  return { effect, what: `${node.kind} ${[...tables].join(', ')}`, transaction: null };
}

/**
 * A view of the app's database that notes every statement, and marks those run through a
 * transaction it opened (each transaction's own plugin marks its statements).
 */
function transactionWatch() {
  const runs = new Map<QueryId, Run>();
  const all: Run[] = [];
  let opened = 0;
  const passResult: KyselyPlugin['transformResult'] = async ({ result }) => result;
  const noting: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      const run = runOf(node);
      runs.set(queryId, run);
      all.push(run);
      return node;
    },
    transformResult: passResult,
  };
  const markingIn = (transaction: number): KyselyPlugin => ({
    transformQuery({ node, queryId }) {
      const run = runs.get(queryId);
      if (run) run.transaction = transaction;
      return node;
    },
    transformResult: passResult,
  });
  const view = (db: Db): Db => {
    const watched = db.withPlugin(noting);
    const open = watched.transaction.bind(watched);
    watched.transaction = () => {
      const builder = open();
      const execute = builder.execute.bind(builder);
      builder.execute = <T>(work: (trx: Transaction<Database>) => Promise<T>) => {
        opened += 1;
        const marked = markingIn(opened);
        return execute((trx) => work(trx.withPlugin(marked)));
      };
      return builder;
    };
    return watched;
  };
  return { view, all, opened: () => opened };
}

/** Presigned URLs made up locally: the tour records a document, it stores no file. */
const madeUpStorage: ObjectStorage = {
  presignPut: async (key) => ({ url: `https://objects.example.test/${key}`, headers: {} }),
  presignGet: async (key) => `https://objects.example.test/${key}`,
};

const watch = transactionWatch();
/** The API's clock: the real one, except while the tour clocks in and out on a shift of 2030. */
let apiNow: Date | null = null;
const t = useTestContext({
  viewDb: watch.view,
  clock: { now: () => apiNow ?? new Date() },
  // Background work writes on its own (the job worker, the reminder sweep): not a service.
  startBackgroundWork: false,
  documents: { store: madeUpStorage, urlTtlSeconds: 900, maxBytes: 1024 * 1024 },
});

describe('the writes the API makes', () => {
  it('all run in a transaction, over a tour of every write route', async () => {
    const visited = new Set<string>();
    /** Calls `route` (its pattern, with `params` filled in) and expects `status`; answers the body. */
    async function call(
      caller: Caller,
      status: number,
      route: `${Method} /api/v1/${string}`,
      params: Record<string, string> = {},
      body?: unknown,
    ) {
      const [method, pattern] = route.split(' ') as [Method, string];
      const url = pattern.replace(/:([a-z_]+)/g, (_m, name: string) => {
        const value = params[name];
        if (value === undefined) throw new Error(`${route}: no value for :${name}`);
        return value;
      });
      const response = await caller.request(method, url, body);
      expect(response.statusCode, `${route}: ${response.body}`).toBe(status);
      visited.add(route);
      return response.statusCode === 204 ? {} : response.json();
    }

    // Signing in provisions the tenant and its people.
    const tenant = uniqueName('writes');
    const admin = await t.ctx.caller('admin', tenant, 'admin');
    const giver = await t.ctx.caller('employee', tenant, 'giver');
    const taker = await t.ctx.caller('employee', tenant, 'taker');
    await call(
      admin,
      200,
      'PATCH /api/v1/tenant/settings',
      {},
      {
        time_tracking_enabled: true,
        notify_on_assignment: true,
        offers_need_approval: true,
        time_entries_before_end: true,
      },
    );

    // Roles, qualifications, locations, people.
    const cook = await call(admin, 201, 'POST /api/v1/roles', {}, { name: 'Cook' });
    const temp = await call(admin, 201, 'POST /api/v1/roles', {}, { name: 'Temp' });
    for (const person of [giver, taker])
      await call(admin, 204, 'POST /api/v1/users/:id/qualifications/:role_id', {
        id: person.userId,
        role_id: cook.id,
      });
    await call(admin, 204, 'POST /api/v1/users/:id/qualifications/:role_id', {
      id: giver.userId,
      role_id: temp.id,
    });
    await call(admin, 204, 'DELETE /api/v1/users/:id/qualifications/:role_id', {
      id: giver.userId,
      role_id: temp.id,
    });
    await call(admin, 204, 'DELETE /api/v1/roles/:id', { id: temp.id });
    const hall = await call(admin, 201, 'POST /api/v1/locations', {}, { name: 'Hall' });
    const shed = await call(admin, 201, 'POST /api/v1/locations', {}, { name: 'Shed' });
    await call(admin, 204, 'DELETE /api/v1/locations/:id', { id: shed.id });
    const carol = await call(
      admin,
      201,
      'POST /api/v1/users',
      {},
      { subject: 'carol', name: 'Carol', role: 'employee' },
    );
    await call(admin, 200, 'PATCH /api/v1/users/:id', { id: carol.id }, { name: 'Carol B.' });
    await call(giver, 200, 'PATCH /api/v1/me', {}, { locale: 'de-DE' });

    // An event, its document and its shifts.
    const event = await call(
      admin,
      201,
      'POST /api/v1/events',
      {},
      {
        name: 'Fair',
        starts_at: '2030-07-01T00:00:00Z',
        ends_at: '2030-07-08T00:00:00Z',
        location_id: hall.id,
      },
    );
    await call(admin, 200, 'PATCH /api/v1/events/:id', { id: event.id }, { name: 'Summer fair' });
    await call(admin, 200, 'POST /api/v1/events/:id/publish', { id: event.id });
    const document = { filename: 'plan.pdf', content_type: 'application/pdf', size_bytes: 10 };
    await call(admin, 201, 'POST /api/v1/events/:id/documents/upload', { id: event.id }, document);
    const shiftBody = (startsAt: string, endsAt: string) => ({
      event_id: event.id,
      name: 'Bar',
      starts_at: startsAt,
      ends_at: endsAt,
      slots: [{ role_id: cook.id, capacity: 2 }],
    });
    const bar = await call(
      admin,
      201,
      'POST /api/v1/shifts',
      {},
      shiftBody('2030-07-02T10:00:00Z', '2030-07-02T14:00:00Z'),
    );
    await call(admin, 200, 'PATCH /api/v1/shifts/:id', { id: bar.id }, { name: 'Bar, early' });
    const extra = await call(
      admin,
      201,
      'POST /api/v1/shifts/:id/slots',
      { id: bar.id },
      { role_id: cook.id, capacity: 1 },
    );
    await call(
      admin,
      200,
      'PATCH /api/v1/shifts/:id/slots/:slot_id',
      { id: bar.id, slot_id: extra.id },
      { capacity: 3 },
    );
    await call(admin, 204, 'DELETE /api/v1/shifts/:id/slots/:slot_id', { id: bar.id, slot_id: extra.id });
    await call(admin, 200, 'POST /api/v1/shifts/:id/publish', { id: bar.id });
    const week = await call(
      admin,
      201,
      'POST /api/v1/events/:event_id/shifts/bulk',
      { event_id: event.id },
      {
        start_time: '16:00',
        end_time: '20:00',
        slots: [{ role_id: cook.id, capacity: 2 }],
      },
    );
    await call(admin, 200, 'POST /api/v1/shifts/publish', {}, { event_id: event.id });
    const long = await call(
      admin,
      201,
      'POST /api/v1/shifts',
      {},
      shiftBody('2030-07-03T06:00:00Z', '2030-07-03T10:00:00Z'),
    );
    const pieces = await call(admin, 200, 'POST /api/v1/shifts/:id/split/:n', { id: long.id, n: '2' });
    await call(admin, 204, 'DELETE /api/v1/shifts/:id', { id: pieces[1].id });

    // Seats: claimed, assigned and taken away.
    const slotOf = async (shiftId: string) =>
      ((await admin.request('GET', `/api/v1/shifts/${shiftId}/slots`)).json() as { id: string }[])[0]?.id ??
      '';
    const claim = (caller: Caller, shiftId: string, slotId: string) =>
      call(caller, 201, 'POST /api/v1/shifts/:shift_id/slots/:slot_id/claim', {
        shift_id: shiftId,
        slot_id: slotId,
      });
    const worked = await claim(giver, bar.id, await slotOf(bar.id));
    const placed = await call(
      admin,
      201,
      'POST /api/v1/shifts/:shift_id/slots/:slot_id/assign',
      { shift_id: week[0].id, slot_id: await slotOf(week[0].id) },
      { user_id: taker.userId },
    );
    await call(admin, 204, 'DELETE /api/v1/shifts/:shift_id/assignments/:assignment_id', {
      shift_id: week[0].id,
      assignment_id: placed.id,
    });

    // The taker was told of both: read one, then the rest.
    const told = (await taker.request('GET', '/api/v1/notifications')).json() as { id: string }[];
    expect(told.length).toBeGreaterThan(1);
    await call(taker, 204, 'POST /api/v1/notifications/:id/read', { id: told[0]?.id ?? '' });
    await call(taker, 200, 'POST /api/v1/notifications/read-all');

    // Time worked beyond the shift, paid out.
    await call(
      admin,
      201,
      'POST /api/v1/time-tracking/entries',
      {},
      {
        shift_assignment_id: worked.id,
        started_at: '2030-07-02T10:00:00Z',
        ended_at: '2030-07-02T15:00:00Z',
      },
    );
    await call(admin, 201, 'POST /api/v1/time-tracking/payouts', {}, { user_id: giver.userId, minutes: 30 });

    // Time clocked from the phone, then confirmed.
    const clocked = await claim(taker, bar.id, await slotOf(bar.id));
    apiNow = new Date('2030-07-02T09:55:00Z');
    const proposed = await call(taker, 201, 'POST /api/v1/me/assignments/:id/clock-in', { id: clocked.id });
    apiNow = new Date('2030-07-02T14:05:00Z');
    await call(taker, 200, 'POST /api/v1/me/assignments/:id/clock-out', { id: clocked.id });
    apiNow = null;
    await call(admin, 200, 'POST /api/v1/time-tracking/entries/:id/confirm', { id: proposed.id });

    // Offers: approved, rejected, cancelled.
    const offer = (seatId: string) =>
      call(giver, 201, 'POST /api/v1/assignments/:id/offer', { id: seatId }, {});
    const approved = await offer((await claim(giver, week[1].id, await slotOf(week[1].id))).id);
    await call(taker, 200, 'POST /api/v1/offers/:id/accept', { id: approved.id });
    await call(admin, 200, 'POST /api/v1/offers/:id/approve', { id: approved.id });
    const kept = await claim(giver, week[2].id, await slotOf(week[2].id));
    const rejected = await offer(kept.id);
    await call(taker, 200, 'POST /api/v1/offers/:id/accept', { id: rejected.id });
    await call(admin, 200, 'POST /api/v1/offers/:id/reject', { id: rejected.id });
    await call(giver, 204, 'DELETE /api/v1/offers/:id', { id: (await offer(kept.id)).id });

    // Time off: approved, rejected, withdrawn.
    const away = (day: string) =>
      call(
        giver,
        201,
        'POST /api/v1/me/time-off',
        {},
        { starts_at: `${day}T00:00:00Z`, ends_at: `${day}T23:00:00Z` },
      );
    await call(admin, 200, 'POST /api/v1/time-off/:id/approve', { id: (await away('2030-09-01')).id });
    await call(admin, 200, 'POST /api/v1/time-off/:id/reject', { id: (await away('2030-09-02')).id });
    await call(giver, 204, 'DELETE /api/v1/time-off/:id', { id: (await away('2030-09-03')).id });

    // A form, submitted and converted; another deleted.
    const fields = [{ name: 'contact', label: 'Name', type: 'text', required: true }];
    const form = await call(admin, 201, 'POST /api/v1/forms', {}, { title: 'Catering', fields });
    await call(admin, 200, 'PATCH /api/v1/forms/:id', { id: form.id }, { title: 'Catering requests' });
    const submission = await call(
      admin,
      201,
      'POST /api/v1/f/:slug/submit',
      { slug: form.slug },
      { data: { contact: 'Dana' } },
    );
    const converted = await call(
      admin,
      201,
      'POST /api/v1/forms/:form_id/submissions/:sub_id/convert',
      { form_id: form.id, sub_id: submission.id },
      { name: 'Dana’s party', starts_at: '2030-10-01T18:00:00Z', ends_at: '2030-10-01T23:00:00Z' },
    );
    const spare = await call(admin, 201, 'POST /api/v1/forms', {}, { title: 'Spare', fields });
    await call(admin, 204, 'DELETE /api/v1/forms/:id', { id: spare.id });

    // A browser, a webhook and a calendar address, each made and removed.
    const browser = await call(
      giver,
      201,
      'POST /api/v1/push-subscriptions',
      {},
      {
        endpoint: 'https://push.example.net/wpush/writes',
        keys: {
          p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
          auth: 'tBHItJI5svbpez7KI4CCXg',
        },
      },
    );
    await call(giver, 204, 'DELETE /api/v1/push-subscriptions/:id', { id: browser.id });
    const hook = await call(
      admin,
      201,
      'POST /api/v1/webhooks',
      {},
      {
        url: 'https://hooks.example.net/writes',
        events: ['form.submitted'],
      },
    );
    await call(admin, 204, 'DELETE /api/v1/webhooks/:id', { id: hook.id });
    await call(giver, 201, 'POST /api/v1/me/calendar-token');
    await call(giver, 204, 'DELETE /api/v1/me/calendar-token');

    // The converted event, with a shift and a document, deleted in its steps.
    await call(
      admin,
      201,
      'POST /api/v1/shifts',
      {},
      {
        ...shiftBody('2030-10-01T18:00:00Z', '2030-10-01T22:00:00Z'),
        event_id: converted.id,
      },
    );
    await call(admin, 201, 'POST /api/v1/events/:id/documents/upload', { id: converted.id }, document);
    await call(admin, 204, 'DELETE /api/v1/events/:id', { id: converted.id });

    // The taker, holding the approved offer's seat, deactivated: what that causes.
    await call(admin, 200, 'PATCH /api/v1/users/:id', { id: taker.userId }, { active: false });

    // Every write route was taken (a new one fails here until the tour takes it)…
    const writeRoutes = t.ctx.routes
      .filter((route) => route.method !== 'GET')
      .map((r) => `${r.method} ${r.url}`);
    expect([...visited].sort()).toEqual([...new Set(writeRoutes)].sort());
    // … the watch tells statements in a transaction from those outside…
    expect(watch.opened()).toBeGreaterThan(0);
    expect(watch.all.filter((run) => run.effect === 'write').length).toBeGreaterThan(visited.size);
    expect(watch.all.some((run) => run.transaction === null)).toBe(true);
    // … and no statement that writes or locks rows ran outside one.
    const outside = watch.all.filter((run) => run.effect !== 'read' && run.transaction === null);
    expect(outside.map((run) => `${run.effect}: ${run.what}`)).toEqual([]);
  });
});
