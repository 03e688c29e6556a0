import type { Migration } from 'kysely/migration';
import * as schema from './0001_schema.ts';
import * as schedulingRules from './0002_scheduling_rules.ts';
import * as overtimeLedger from './0003_overtime_ledger.ts';
import * as forms from './0004_forms.ts';
import * as notifications from './0005_notifications.ts';
import * as tenantWall from './0006_tenant_wall.ts';
import * as jobs from './0007_jobs.ts';
import * as reminders from './0008_reminders.ts';
import * as formSubmitHits from './0009_form_submit_hits.ts';
import * as userActive from './0010_user_active.ts';
import * as timeWindowIndexes from './0011_time_window_indexes.ts';
import * as timeEntryIndexes from './0012_time_entry_indexes.ts';
import * as lengthChecks from './0013_length_checks.ts';
import * as approvalSettings from './0014_approval_settings.ts';
import * as auditLog from './0015_audit_log.ts';
import * as timeOff from './0016_time_off.ts';
import * as offers from './0017_offers.ts';
import * as webhooks from './0018_webhooks.ts';
import * as jobWakeups from './0019_job_wakeups.ts';
import * as timeOffBounds from './0020_time_off_bounds.ts';
import * as offersOutliveSeats from './0021_offers_outlive_seats.ts';
import * as webhookBatches from './0022_webhook_batches.ts';
import * as staffApp from './0023_staff_app.ts';
import * as shiftColleaguesSetting from './0024_shift_colleagues_setting.ts';
import * as triggerOrder from './0025_trigger_order.ts';
import * as pruningByFeature from './0026_pruning_by_feature.ts';
import * as eventPublishedWebhooks from './0027_event_published_webhooks.ts';
import * as clockedTime from './0028_clocked_time.ts';
import * as decisionReasons from './0029_decision_reasons.ts';
import * as rateLimitBuckets from './0030_rate_limit_buckets.ts';

/** Ordered by name; a new migration is a new file added here. Never edit a shipped one. */
export const migrations: Record<string, Migration> = {
  '0001_schema': schema,
  '0002_scheduling_rules': schedulingRules,
  '0003_overtime_ledger': overtimeLedger,
  '0004_forms': forms,
  '0005_notifications': notifications,
  '0006_tenant_wall': tenantWall,
  '0007_jobs': jobs,
  '0008_reminders': reminders,
  '0009_form_submit_hits': formSubmitHits,
  '0010_user_active': userActive,
  '0011_time_window_indexes': timeWindowIndexes,
  '0012_time_entry_indexes': timeEntryIndexes,
  '0013_length_checks': lengthChecks,
  '0014_approval_settings': approvalSettings,
  '0015_audit_log': auditLog,
  '0016_time_off': timeOff,
  '0017_offers': offers,
  '0018_webhooks': webhooks,
  '0019_job_wakeups': jobWakeups,
  '0020_time_off_bounds': timeOffBounds,
  '0021_offers_outlive_seats': offersOutliveSeats,
  '0022_webhook_batches': webhookBatches,
  '0023_staff_app': staffApp,
  '0024_shift_colleagues_setting': shiftColleaguesSetting,
  '0025_trigger_order': triggerOrder,
  '0026_pruning_by_feature': pruningByFeature,
  '0027_event_published_webhooks': eventPublishedWebhooks,
  '0028_clocked_time': clockedTime,
  '0029_decision_reasons': decisionReasons,
  '0030_rate_limit_buckets': rateLimitBuckets,
};
