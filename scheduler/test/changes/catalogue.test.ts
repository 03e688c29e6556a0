import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  catalogue,
  changeTypes,
  notificationTypes,
  notifyingChangeTypes,
  webhookChangeTypes,
  webhookEventTypes,
} from '../../src/changes/catalogue.ts';
import { reactions } from '../../src/reactions.ts';
import { useTestContext } from '../support/context.ts';

/**
 * The change catalogue (src/changes/catalogue.ts) is the one table of the names a change
 * goes by. Everything else that names them is held equal to it here: the OpenAPI
 * document, the database's checks and audit triggers, and the docs.
 */
const t = useTestContext();
const root = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

type Schema = { $ref?: string; anyOf?: Schema[]; enum?: string[]; const?: string; items?: Schema } & Record<
  string,
  unknown
>;

/** The string constants a schema admits, following references and unions. */
function constantsOf(schema: Schema | undefined, components: Record<string, Schema>): string[] {
  if (!schema) return [];
  if (schema.$ref) return constantsOf(components[schema.$ref.split('/').at(-1) ?? ''], components);
  if (schema.enum) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  return (schema.anyOf ?? []).flatMap((member) => constantsOf(member, components));
}

/** The quoted names in a piece of SQL: `'shift.published'::text` -> shift.published. */
const quotedNames = (text: string) => [...text.matchAll(/'([a-z_]+\.[a-z_]+)'/g)].map((m) => m[1]);

describe('the change catalogue', () => {
  it('offers exactly its webhook event types in the OpenAPI document, in its order', async () => {
    const response = await t.ctx.request('GET', '/api/docs/openapi.json');
    const doc = response.json() as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Schema }> } }>>;
      components: { schemas: Record<string, Schema> };
    };
    const body = doc.paths['/api/v1/webhooks']?.post?.requestBody.content['application/json']?.schema;
    const request = body?.$ref ? doc.components.schemas[body.$ref.split('/').at(-1) ?? ''] : body;
    const events = (request?.properties as Record<string, Schema> | undefined)?.events;
    expect(constantsOf(events?.items, doc.components.schemas)).toEqual([...webhookEventTypes]);
  });

  it('is what the database accepts: every webhook check names exactly its event types', async () => {
    const { rows } = await sql<{ name: string; definition: string }>`
      SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
       WHERE conrelid IN ('webhook_deliveries'::regclass, 'webhook_batches'::regclass) AND contype = 'c'
         AND pg_get_constraintdef(oid) LIKE '%event_type%'
      UNION ALL
      SELECT proname, pg_get_functiondef(oid) FROM pg_proc WHERE proname = 'webhook_events_valid'
       ORDER BY 1`.execute(t.ctx.db.owner);
    expect(rows.map((row) => row.name)).toEqual([
      'webhook_batches_event_type',
      'webhook_deliveries_event_type',
      'webhook_events_valid',
    ]);
    for (const row of rows)
      expect([row.name, quotedNames(row.definition)]).toEqual([row.name, [...webhookEventTypes]]);
  });

  it('names audit actions only of the types the database audits', async () => {
    // audit_row's first argument is the target type, optionally with its id column.
    const { rows } = await sql<{ args: string }>`
      SELECT DISTINCT encode(tgargs, 'escape') AS args FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE p.proname = 'audit_row'`.execute(t.ctx.db.owner);
    const audited = new Set(rows.map((row) => (row.args.split('\\000')[0] ?? '').split(':')[0]));
    const named = changeTypes.map((type) => catalogue[type].audit).filter((audit) => audit !== null);
    expect(named.length).toBeGreaterThan(0);
    for (const action of named)
      expect([action, audited.has(action.split('.')[0] ?? '')]).toEqual([action, true]);
  });

  it('describes exactly the notification types in the OpenAPI document', async () => {
    const response = await t.ctx.request('GET', '/api/docs/openapi.json');
    const doc = response.json() as { components: { schemas: Record<string, Schema> } };
    const type = (doc.components.schemas.Notification?.properties as Record<string, Schema> | undefined)
      ?.type;
    const listed = String(type?.description)
      .replace(/ \(.*$/, '')
      .split(/, | or /);
    expect(listed).toEqual([...notificationTypes]);
    for (const change of notifyingChangeTypes)
      expect(notificationTypes).toContain(catalogue[change].notification);
  });

  it('has the reactions that make it true: webhooks and notifications hear every change that names one', () => {
    const heard = (feature: string) =>
      new Set(reactions.filter((r) => r.by === feature).flatMap((r) => r.to));
    expect([...heard('webhooks')].sort()).toEqual([...webhookChangeTypes].sort());
    expect([...heard('notifications')].sort()).toEqual([...notifyingChangeTypes].sort());
    // Nobody reacts to a change the catalogue does not know.
    for (const reaction of reactions) for (const type of reaction.to) expect(changeTypes).toContain(type);
  });

  it('is shown as it is in docs/architecture.md', () => {
    const cell = (names: readonly string[]) =>
      names.length === 0 ? '—' : names.map((n) => `\`${n}\``).join(', ');
    const table = [
      '| Change | Audit action | Webhook events | Notification | What happened |',
      '| --- | --- | --- | --- | --- |',
      ...changeTypes.map((type) => {
        const entry = catalogue[type];
        return `| \`${type}\` | ${cell(entry.audit ? [entry.audit] : [])} | ${cell(entry.webhooks)} | ${cell(
          entry.notification ? [entry.notification] : [],
        )} | ${entry.means} |`;
      }),
    ].join('\n');
    // On failure the expected table is printed: paste it into the docs.
    expect(read('docs/architecture.md')).toContain(table);
  });

  it('lists the webhook event types in the API reference in its order', () => {
    const api = read('docs/scheduler/api.md');
    const line = api.split('\n').find((l) => l.startsWith('| `POST /api/v1/webhooks` |')) ?? '';
    const listed = /`events` one or more of (.*?), each once/.exec(line)?.[1] ?? '';
    expect([...listed.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1])).toEqual([...webhookEventTypes]);
  });
});
