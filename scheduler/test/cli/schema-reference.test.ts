import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runsIf } from '../../../scripts/test-skip.ts';
import {
  migratedReference,
  referenceFile,
  regenerateCommand,
  run,
  schemaReference,
} from '../../src/cli/schema-reference.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { openTestDatabase } from '../support/database.ts';
import { NEEDS_POSTGRES } from '../support/skips.ts';

/**
 * docs/scheduler/schema.md is the database as the migrations leave it, read from the
 * catalogue: the test regenerates it as the command does (a fresh embedded database taken
 * through every migration) and, on PostgreSQL runs, from PostgreSQL's catalogue after the
 * same migrations, and holds the committed file to both. The second is the proof that the
 * one migration set gives both engines the same schema: no rendering detail is normalised
 * for either (the generator leaves out only what differs by server version, not by
 * migration: extension versions and PostgreSQL 18's rows for not-null constraints).
 */
const stale = `docs/scheduler/schema.md is stale: run \`${regenerateCommand}\` and commit it`;
const committed = readFileSync(referenceFile, 'utf8');

/** A fresh database through every migration: 5 s a migration on a loaded machine. */
const THROUGH_THE_MIGRATIONS = Object.keys(migrations).length * 5_000;

let generated: string;
beforeAll(async () => {
  generated = await migratedReference();
}, THROUGH_THE_MIGRATIONS);

describe('docs/scheduler/schema.md', () => {
  it('is what the migrations give a fresh embedded database', () => {
    expect(generated, stale).toBe(committed);
  });

  it(
    'is what PostgreSQL’s catalogue says after the same migrations',
    runsIf(inject('testDb') === 'postgres', NEEDS_POSTGRES),
    async () => {
      const database = await openTestDatabase();
      try {
        const fromPostgres = await schemaReference(database.owner);
        expect(fromPostgres, `PostgreSQL's schema differs from the embedded one's (${stale})`).toBe(
          committed,
        );
      } finally {
        await database.dispose();
      }
    },
  );

  it('names the last migration and shows no installation’s details', () => {
    const last = Object.keys(migrations).at(-1) as string;
    expect(committed).toContain(`\`${last}\``);
    // The owner's login (a role named in code), OIDs (the foreign keys' internal triggers
    // are named by them) and times.
    expect(committed).not.toMatch(/`postgres`|RI_ConstraintTrigger|\d{4}-\d{2}-\d{2}T\d/);
  });
});

describe('the reference of a schema a later migration changes', () => {
  it('shows what it adds, and a trigger that joins a set without a reason says so', async () => {
    const database = await openTestDatabase();
    try {
      for (const statement of [
        "CREATE TYPE mood AS ENUM ('calm', 'busy')",
        'CREATE SEQUENCE ticket_numbers',
        "CREATE VIEW open_jobs AS SELECT tenant_id, id FROM jobs WHERE status = 'pending'",
        `CREATE TRIGGER shift_assignments_15_probe BEFORE INSERT ON shift_assignments
           FOR EACH ROW EXECUTE FUNCTION shift_assignments_require_active_user()`,
        `CREATE TRIGGER jobs_probe AFTER INSERT ON jobs
           FOR EACH ROW EXECUTE FUNCTION jobs_announce_due()`,
      ]) {
        await sql.raw(statement).execute(database.owner);
      }
      const reference = await schemaReference(database.owner);
      expect(reference).toContain("### `mood`\n\nAn enum: `'calm', 'busy'`.");
      expect(reference).toContain('### `ticket_numbers`\n\nA sequence.');
      expect(reference).toMatch(/### `open_jobs`\n\nA view\.\n\n```sql\n[^`]*FROM jobs/);
      expect(reference).toContain(
        '| 2 | `shift_assignments_15_probe` | INSERT | | `shift_assignments_require_active_user()` | |',
      );
      expect(reference).toContain(
        'AFTER, for each row: these share events and fire in this order. What their order decides is not written down yet',
      );
      expect(reference).toContain('| 2 | `jobs_probe` | INSERT | | `jobs_announce_due()` |');
    } finally {
      await database.dispose();
    }
  });
});

describe(`${regenerateCommand}`, () => {
  const scratch = () => path.join(mkdtempSync(path.join(tmpdir(), 'schema-')), 'schema.md');
  const io = () => {
    const lines = { log: [] as string[], error: [] as string[] };
    return {
      lines,
      options: {
        generate: async () => generated,
        log: (line: string) => lines.log.push(line),
        error: (line: string) => lines.error.push(line),
      },
    };
  };

  it('writes the reference where it is missing or stale, and leaves a current one alone', async () => {
    const file = scratch();
    const missing = io();
    expect(await run([], { ...missing.options, file })).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(generated);
    expect(missing.lines.log).toEqual([`wrote ${path.relative(process.cwd(), file)}`]);

    writeFileSync(file, 'old');
    expect(await run([], { ...io().options, file })).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(generated);

    const current = io();
    expect(await run([], { ...current.options, file })).toBe(0);
    expect(current.lines.log).toEqual([`${path.relative(process.cwd(), file)} is up to date`]);
  });

  it('--check writes nothing, exits 1 on a stale or missing file naming the command, 0 on a current one', async () => {
    const file = scratch();
    const shown = path.relative(process.cwd(), file);
    const missing = io();
    expect(await run(['--check'], { ...missing.options, file })).toBe(1);
    expect(missing.lines.error).toEqual([`${shown} is missing: run \`${regenerateCommand}\` and commit it`]);

    const lines = generated.split('\n');
    writeFileSync(file, [...lines.slice(0, 5), 'edited by hand', ...lines.slice(6)].join('\n'));
    const edited = io();
    expect(await run(['--check'], { ...edited.options, file })).toBe(1);
    expect(edited.lines.error).toEqual([
      `${shown} is stale (line 6: the file has "edited by hand", the schema gives ${JSON.stringify(lines[5])}): run \`${regenerateCommand}\` and commit it`,
    ]);
    expect(readFileSync(file, 'utf8')).toContain('edited by hand');

    // Cut short: the first line missing is named.
    writeFileSync(file, `${lines.slice(0, 3).join('\n')}\n`);
    const cut = io();
    expect(await run(['--check'], { ...cut.options, file })).toBe(1);
    expect(cut.lines.error).toEqual([
      `${shown} is stale (line 4: the file has (end of file), the schema gives ${JSON.stringify(lines[3])}): run \`${regenerateCommand}\` and commit it`,
    ]);

    writeFileSync(file, generated);
    const current = io();
    expect(await run(['--check'], { ...current.options, file })).toBe(0);
    expect(current.lines).toEqual({ log: [`${shown} is up to date`], error: [] });
  });

  it('refuses an unknown option with exit code 2, generating nothing', async () => {
    const refused = io();
    let generatedAgain = false;
    const code = await run(['--chek'], {
      ...refused.options,
      file: scratch(),
      generate: async () => {
        generatedAgain = true;
        return generated;
      },
    });
    expect(code).toBe(2);
    expect(generatedAgain).toBe(false);
    expect(refused.lines.error[0]).toMatch(/^Unknown option '--chek'/);
  });
});
