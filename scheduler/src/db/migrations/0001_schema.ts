import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.ts';

/**
 * The first schema: the seed's tables, laid down at once. It is not the schema as it
 * stands: later migrations changed it (0002 dropped the `status` columns of events and
 * shifts and replaced the foreign keys of assignments, time entries and payouts; later
 * ones added tables, columns, checks, triggers and row-level security), and the comments
 * inside the statements below describe it as first written (since 0002 a trigger keeps
 * `filled_count`, not the statement that inserts an assignment). The schema as it stands,
 * read from the catalogue: docs/scheduler/schema.md (`npm run -s schema:reference -w scheduler`).
 *
 * Every table here but `tenants` leads with `tenant_id`, and every reference between
 * tables includes it, so a row can never point into another tenant; the later migrations
 * keep both rules (`form_submit_hits` of 0009, the one table without `tenant_id`, holds no
 * tenant's rows and references nothing). Two unique keys are global, not per tenant: a
 * form's `slug` here and a calendar token's hash (0005), looked up from public URLs that
 * carry no tenant; distributing the tables by tenant (Citus, which wants the distribution
 * column in every unique key) would need those two lookups changed first. Plain SQL keeps
 * one migration set valid on PGlite and on PostgreSQL 15+. `down` undoes this migration
 * on a database that has no later one.
 */
const schema = `
    CREATE TABLE tenants (
      id                 uuid PRIMARY KEY,
      vapid_public_key   text NOT NULL,
      vapid_private_key  text NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE tenant_settings (
      tenant_id              uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
      time_tracking_enabled  boolean NOT NULL DEFAULT false,
      timezone               text NOT NULL DEFAULT 'UTC',
      created_at             timestamptz NOT NULL DEFAULT now(),
      updated_at             timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE users (
      tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id            uuid NOT NULL,
      role          text NOT NULL CHECK (role IN ('admin', 'employee', 'customer')),
      display_name  text,
      email         text,
      created_at    timestamptz NOT NULL DEFAULT now(),
      updated_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id)
    );

    CREATE TABLE roles (
      tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      name         text NOT NULL,
      description  text,
      created_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, name)
    );

    CREATE TABLE user_qualifications (
      tenant_id   uuid NOT NULL,
      user_id     uuid NOT NULL,
      role_id     uuid NOT NULL,
      granted_by  uuid,
      created_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, user_id, role_id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, role_id) REFERENCES roles (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX user_qualifications_role ON user_qualifications (tenant_id, role_id);

    CREATE TABLE locations (
      tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      name         text NOT NULL,
      street       text,
      city         text,
      postal_code  text,
      country      text,
      lat          double precision,
      lng          double precision,
      created_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id)
    );

    CREATE TABLE customer_forms (
      tenant_id    uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id           uuid NOT NULL,
      slug         text NOT NULL UNIQUE,
      title        text NOT NULL,
      fields       jsonb NOT NULL,
      customer_id  uuid,
      created_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id)
    );

    CREATE TABLE form_submissions (
      tenant_id     uuid NOT NULL,
      id            uuid NOT NULL,
      form_id       uuid NOT NULL,
      data          jsonb NOT NULL,
      submitted_by  uuid,
      customer_id   uuid,
      created_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, form_id) REFERENCES customer_forms (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX form_submissions_form ON form_submissions (tenant_id, form_id, created_at);

    CREATE TABLE events (
      tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id             uuid NOT NULL,
      name           text NOT NULL,
      description    text,
      location_id    uuid,
      starts_at      timestamptz NOT NULL,
      ends_at        timestamptz NOT NULL,
      status         text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published')),
      published_at   timestamptz,
      submission_id  uuid,
      created_at     timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      CHECK (ends_at > starts_at),
      -- A submission converts into at most one event.
      UNIQUE (tenant_id, submission_id),
      FOREIGN KEY (tenant_id, location_id) REFERENCES locations (tenant_id, id) ON DELETE SET NULL (location_id),
      FOREIGN KEY (tenant_id, submission_id) REFERENCES form_submissions (tenant_id, id) ON DELETE SET NULL (submission_id)
    );
    CREATE INDEX events_starts ON events (tenant_id, starts_at);

    CREATE TABLE event_documents (
      tenant_id     uuid NOT NULL,
      id            uuid NOT NULL,
      event_id      uuid NOT NULL,
      object_key    text NOT NULL,
      filename      text NOT NULL,
      content_type  text NOT NULL,
      size_bytes    bigint NOT NULL,
      requested_by  uuid,
      created_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, event_id) REFERENCES events (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE shifts (
      tenant_id     uuid NOT NULL,
      id            uuid NOT NULL,
      event_id      uuid NOT NULL,
      name          text NOT NULL,
      location_id   uuid,
      starts_at     timestamptz NOT NULL,
      ends_at       timestamptz NOT NULL,
      -- "completed" is derived from ends_at at read time, never stored.
      status        text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'open', 'filled')),
      published_at  timestamptz,
      created_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      CHECK (ends_at > starts_at),
      FOREIGN KEY (tenant_id, event_id) REFERENCES events (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, location_id) REFERENCES locations (tenant_id, id) ON DELETE SET NULL (location_id)
    );
    CREATE INDEX shifts_event ON shifts (tenant_id, event_id, starts_at);
    CREATE INDEX shifts_starts ON shifts (tenant_id, starts_at);

    CREATE TABLE shift_slots (
      tenant_id     uuid NOT NULL,
      id            uuid NOT NULL,
      shift_id      uuid NOT NULL,
      role_id       uuid NOT NULL,
      capacity      integer NOT NULL CHECK (capacity BETWEEN 1 AND 10000),
      -- Kept by the same statement that inserts an assignment, so capacity holds under concurrency.
      filled_count  integer NOT NULL DEFAULT 0,
      created_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      CHECK (filled_count BETWEEN 0 AND capacity),
      FOREIGN KEY (tenant_id, shift_id) REFERENCES shifts (tenant_id, id) ON DELETE CASCADE,
      -- A role that slots still need cannot be deleted.
      FOREIGN KEY (tenant_id, role_id) REFERENCES roles (tenant_id, id) ON DELETE RESTRICT
    );
    CREATE INDEX shift_slots_shift ON shift_slots (tenant_id, shift_id);
    CREATE INDEX shift_slots_role ON shift_slots (tenant_id, role_id);

    CREATE TABLE shift_assignments (
      tenant_id    uuid NOT NULL,
      id           uuid NOT NULL,
      shift_id     uuid NOT NULL,
      slot_id      uuid NOT NULL,
      user_id      uuid NOT NULL,
      source       text NOT NULL CHECK (source IN ('claim', 'assign')),
      assigned_by  uuid,
      starts_at    timestamptz NOT NULL,
      ends_at      timestamptz NOT NULL,
      created_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, shift_id, user_id),
      FOREIGN KEY (tenant_id, shift_id) REFERENCES shifts (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, slot_id) REFERENCES shift_slots (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX shift_assignments_user_time ON shift_assignments (tenant_id, user_id, starts_at);

    CREATE TABLE time_entries (
      tenant_id            uuid NOT NULL,
      id                   uuid NOT NULL,
      shift_assignment_id  uuid NOT NULL,
      user_id              uuid NOT NULL,
      started_at           timestamptz NOT NULL,
      ended_at             timestamptz NOT NULL,
      break_minutes        integer NOT NULL DEFAULT 0 CHECK (break_minutes >= 0),
      worked_minutes       integer NOT NULL,
      scheduled_minutes    integer NOT NULL,
      overtime_minutes     integer NOT NULL,
      recorded_by          uuid,
      created_at           timestamptz NOT NULL DEFAULT now(),
      updated_at           timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      -- One entry per assignment: re-posting updates it instead of crediting twice.
      UNIQUE (tenant_id, shift_assignment_id),
      CHECK (ended_at > started_at),
      FOREIGN KEY (tenant_id, shift_assignment_id) REFERENCES shift_assignments (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE overtime_balances (
      tenant_id        uuid NOT NULL,
      user_id          uuid NOT NULL,
      balance_minutes  bigint NOT NULL DEFAULT 0,
      updated_at       timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, user_id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );

    CREATE TABLE payouts (
      tenant_id   uuid NOT NULL,
      id          uuid NOT NULL,
      user_id     uuid NOT NULL,
      minutes     integer NOT NULL CHECK (minutes > 0),
      note        text,
      paid_by     uuid,
      created_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX payouts_user ON payouts (tenant_id, user_id, created_at);

    CREATE TABLE notifications (
      tenant_id   uuid NOT NULL,
      id          uuid NOT NULL,
      user_id     uuid NOT NULL,
      type        text NOT NULL,
      title       text NOT NULL,
      body        text,
      data        jsonb,
      read_at     timestamptz,
      created_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
    CREATE INDEX notifications_user ON notifications (tenant_id, user_id, created_at DESC);

    CREATE TABLE push_subscriptions (
      tenant_id   uuid NOT NULL,
      id          uuid NOT NULL,
      user_id     uuid NOT NULL,
      endpoint    text NOT NULL,
      p256dh      text NOT NULL,
      auth        text NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, id),
      UNIQUE (tenant_id, user_id, endpoint),
      FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
    );
`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await runStatements(db, schema);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await runStatements(
    db,
    `DROP TABLE push_subscriptions, notifications, payouts, overtime_balances, time_entries,
      shift_assignments, shift_slots, shifts, event_documents, events, form_submissions,
      customer_forms, locations, user_qualifications, roles, users, tenant_settings, tenants;`,
  );
}
