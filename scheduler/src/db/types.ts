import type { ColumnType, Generated } from 'kysely';
import type { AccessRole } from '../auth/identity.ts';

/**
 * Row types as queries return them: the connection's type parsers (db/wire-types.ts)
 * deliver uuids as 32 hex digits, timestamps as RFC 3339 UTC strings and int8 as numbers.
 */
type CreatedAt = ColumnType<string, string | undefined, never>;
type UpdatedAt = ColumnType<string, string | undefined, string>;
type Timestamp = ColumnType<string, string, string>;
type NullableTimestamp = ColumnType<string | null, string | null | undefined, string | null>;
type Json<T> = ColumnType<T, string, string>;
type BigIntColumn = ColumnType<number, number, number>;

export interface TenantsTable {
  id: string;
  vapid_public_key: string;
  vapid_private_key: string;
  created_at: CreatedAt;
}

export interface TenantSettingsTable {
  tenant_id: string;
  time_tracking_enabled: Generated<boolean>;
  timezone: Generated<string>;
  notify_on_assignment: Generated<boolean>;
  locale: Generated<string>;
  remind_minutes_before_shift: ColumnType<number | null, number | null | undefined, number | null>;
  offers_need_approval: Generated<boolean>;
  time_off_needs_approval: Generated<boolean>;
  shift_colleagues_visible: Generated<boolean>;
  time_entries_before_end: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface UsersTable {
  tenant_id: string;
  id: string;
  role: AccessRole;
  display_name: string | null;
  email: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  active: Generated<boolean>;
  profile_set_by_admin: Generated<boolean>;
  /** The language the user chose for the app (BCP 47), or null. */
  locale: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface RolesTable {
  tenant_id: string;
  id: string;
  name: string;
  description: string | null;
  created_at: CreatedAt;
}

export interface UserQualificationsTable {
  tenant_id: string;
  user_id: string;
  role_id: string;
  granted_by: string | null;
  created_at: CreatedAt;
}

export interface LocationsTable {
  tenant_id: string;
  id: string;
  name: string;
  street: string | null;
  city: string | null;
  postal_code: string | null;
  country: string | null;
  lat: number | null;
  lng: number | null;
  created_at: CreatedAt;
}

export interface FormField {
  name: string;
  label: string;
  type: 'text' | 'email' | 'tel' | 'date' | 'number' | 'textarea' | 'select';
  required: boolean;
  /** Select fields only: the values a customer may choose. */
  options?: string[];
}

export interface CustomerFormsTable {
  tenant_id: string;
  id: string;
  slug: string;
  title: string;
  fields: Json<FormField[]>;
  customer_id: string | null;
  customer_claim: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface FormSubmissionsTable {
  tenant_id: string;
  id: string;
  form_id: string;
  data: Json<Record<string, unknown>>;
  submitted_by: string | null;
  customer_id: string | null;
  customer_claim: string | null;
  created_at: CreatedAt;
}

export interface EventsTable {
  tenant_id: string;
  id: string;
  name: string;
  description: string | null;
  location_id: string | null;
  starts_at: Timestamp;
  ends_at: Timestamp;
  published_at: NullableTimestamp;
  submission_id: string | null;
  created_at: CreatedAt;
}

export interface EventDocumentsTable {
  tenant_id: string;
  id: string;
  event_id: string;
  object_key: string;
  filename: string;
  content_type: string;
  size_bytes: BigIntColumn;
  requested_by: string | null;
  created_at: CreatedAt;
}

export interface ShiftsTable {
  tenant_id: string;
  id: string;
  event_id: string;
  name: string;
  location_id: string | null;
  starts_at: Timestamp;
  ends_at: Timestamp;
  published_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface ShiftSlotsTable {
  tenant_id: string;
  id: string;
  shift_id: string;
  role_id: string;
  capacity: number;
  /** Kept by a trigger from the assignments; the database refuses any other write. */
  filled_count: ColumnType<number, never, never>;
  created_at: CreatedAt;
}

export interface ShiftAssignmentsTable {
  tenant_id: string;
  id: string;
  shift_id: string;
  slot_id: string;
  user_id: string;
  source: 'claim' | 'assign';
  assigned_by: string | null;
  starts_at: Timestamp;
  ends_at: Timestamp;
  created_at: CreatedAt;
}

export interface TimeEntriesTable {
  tenant_id: string;
  id: string;
  shift_assignment_id: string;
  user_id: string;
  started_at: Timestamp;
  /** Null while the entry is open (clocked in, not out). */
  ended_at: NullableTimestamp;
  break_minutes: number;
  worked_minutes: number | null;
  scheduled_minutes: number;
  overtime_minutes: number | null;
  recorded_by: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  /** `proposed` (clocked, not in the books) or `confirmed` (in the overtime ledger). */
  status: ColumnType<
    'proposed' | 'confirmed',
    'proposed' | 'confirmed' | undefined,
    'proposed' | 'confirmed'
  >;
  confirmed_at: NullableTimestamp;
  confirmed_by: string | null;
}

export interface OvertimeBalancesTable {
  tenant_id: string;
  user_id: string;
  balance_minutes: BigIntColumn;
  updated_at: UpdatedAt;
}

export interface PayoutsTable {
  tenant_id: string;
  id: string;
  user_id: string;
  minutes: number;
  note: string | null;
  paid_by: string | null;
  created_at: CreatedAt;
}

/** Written only by the database's triggers (migration 0003); read-only to the app. */
export interface OvertimeLedgerTable {
  tenant_id: string;
  id: ColumnType<string, never, never>;
  seq: ColumnType<number, never, never>;
  user_id: string;
  kind: 'entry' | 'correction' | 'payout';
  delta_minutes: BigIntColumn;
  time_entry_id: string | null;
  payout_id: string | null;
  created_at: CreatedAt;
}

export interface NotificationsTable {
  tenant_id: string;
  id: string;
  user_id: string;
  type: string;
  title: string;
  body: string | null;
  data: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  read_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface PushSubscriptionsTable {
  tenant_id: string;
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  /** A name given at registration, or null. */
  label: ColumnType<string | null, string | null | undefined, string | null>;
  /** The browser's User-Agent as it registered (cut to 512 characters), or null. */
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface CalendarTokensTable {
  tenant_id: string;
  user_id: string;
  token_hash: string;
  /** When the current token was made (a new token replaces the row's). */
  created_at: UpdatedAt;
}

export interface JobsTable {
  tenant_id: string;
  id: string;
  kind: 'push' | 'webhook';
  /** Idempotency key within the tenant and kind. */
  key: string;
  payload: Json<Record<string, unknown>>;
  status: Generated<'pending' | 'done' | 'dead'>;
  attempts: Generated<number>;
  max_attempts: number;
  run_at: ColumnType<string, string | undefined, string>;
  locked_until: NullableTimestamp;
  locked_by: ColumnType<string | null, string | null | undefined, string | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  finished_at: NullableTimestamp;
  /** Queued again while a worker held it: due again once that run is recorded (migration 0019). */
  run_again: Generated<boolean>;
}

export interface ShiftRemindersTable {
  tenant_id: string;
  assignment_id: string;
  created_at: CreatedAt;
}

export interface FormSubmitHitsTable {
  key: string;
  at: Timestamp;
}

export interface RateLimitBucketsTable {
  tenant_id: string;
  scope: 'tenant' | 'user';
  subject: string;
  tokens: number;
  capacity: number;
  updated_at: Timestamp;
}

export interface AuditLogTable {
  tenant_id: string;
  seq: ColumnType<number, never, never>;
  id: string;
  actor_user_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  at: CreatedAt;
  changes: Json<AuditChanges>;
}

/** What an audit row records of its target: the fields before and after the change. */
export interface AuditChanges {
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

export interface TimeOffTable {
  tenant_id: string;
  id: string;
  user_id: string;
  starts_at: Timestamp;
  ends_at: Timestamp;
  reason: string | null;
  status: 'requested' | 'approved' | 'rejected';
  decided_by: string | null;
  decided_at: NullableTimestamp;
  created_at: CreatedAt;
  /** Migration 0029: why an admin approved or rejected it; null when they gave no reason. */
  decision_reason: string | null;
}

export interface OffersTable {
  tenant_id: string;
  id: string;
  /** Null once the seat was removed (migration 0021): the offer stays as a record. */
  assignment_id: string | null;
  shift_id: string;
  from_user_id: string;
  to_user_id: string | null;
  /** `expired` is stored only for an offer whose seat went after its shift started (0021). */
  status: Generated<'open' | 'accepted' | 'approved' | 'rejected' | 'cancelled' | 'expired'>;
  accepted_by: string | null;
  created_at: CreatedAt;
  decided_at: Timestamp | null;
  decided_by: string | null;
  expires_at: Timestamp;
  /** Migration 0029: why an admin approved or rejected it; null when they gave no reason. */
  decision_reason: string | null;
}

/** Migration 0018: the webhooks of a tenant (src/webhooks/). */
export interface WebhooksTable {
  tenant_id: string;
  id: string;
  url: string;
  events: string[];
  /** The signing secret (`whsec_…`): shown once at creation, never listed. */
  secret: string;
  /** The hook's last delivery number; counted under the hook's row lock as events are queued. */
  last_seq: Generated<number>;
  disabled_at: NullableTimestamp;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

export interface WebhookDeliveriesTable {
  tenant_id: string;
  /** The `webhook-id` header: the same on every try. */
  id: string;
  webhook_id: string;
  seq: number;
  event_type: string;
  payload: Json<Record<string, unknown>>;
  status: Generated<'pending' | 'delivered' | 'failed' | 'dead'>;
  attempts: Generated<number>;
  response_code: ColumnType<number | null, number | null | undefined, number | null>;
  duration_ms: ColumnType<number | null, number | null | undefined, number | null>;
  next_retry_at: NullableTimestamp;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  delivered_at: NullableTimestamp;
}

/** One change's events of one type, written once for every hook (migration 0022). */
export interface WebhookBatchesTable {
  tenant_id: string;
  id: string;
  event_type: string;
  /** How many bodies. */
  size: number;
  created_at: CreatedAt;
}

/** One body of a batch, at its position (from 0). */
export interface WebhookBatchBodiesTable {
  tenant_id: string;
  batch_id: string;
  position: number;
  body: Json<Record<string, unknown>>;
}

/** A hook's share of a batch: its numbers from `first_seq`, `expanded` of `total` already deliveries. */
export interface WebhookFanoutsTable {
  tenant_id: string;
  webhook_id: string;
  batch_id: string;
  first_seq: number;
  total: number;
  expanded: Generated<number>;
}

export type JobKind = JobsTable['kind'];
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead';
export type JobStatus = 'pending' | 'done' | 'dead';

export interface Database {
  tenants: TenantsTable;
  tenant_settings: TenantSettingsTable;
  users: UsersTable;
  roles: RolesTable;
  user_qualifications: UserQualificationsTable;
  locations: LocationsTable;
  customer_forms: CustomerFormsTable;
  form_submissions: FormSubmissionsTable;
  events: EventsTable;
  event_documents: EventDocumentsTable;
  shifts: ShiftsTable;
  shift_slots: ShiftSlotsTable;
  shift_assignments: ShiftAssignmentsTable;
  time_entries: TimeEntriesTable;
  overtime_balances: OvertimeBalancesTable;
  payouts: PayoutsTable;
  overtime_ledger: OvertimeLedgerTable;
  notifications: NotificationsTable;
  push_subscriptions: PushSubscriptionsTable;
  calendar_tokens: CalendarTokensTable;
  jobs: JobsTable;
  shift_reminders: ShiftRemindersTable;
  form_submit_hits: FormSubmitHitsTable;
  rate_limit_buckets: RateLimitBucketsTable;
  audit_log: AuditLogTable;
  time_off: TimeOffTable;
  offers: OffersTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_batches: WebhookBatchesTable;
  webhook_batch_bodies: WebhookBatchBodiesTable;
  webhook_fanouts: WebhookFanoutsTable;
}
