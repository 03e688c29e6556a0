import { type Api, expectData, type Schemas } from '../../api/client.ts';

/** What one Publish makes visible: some shifts (and their draft events), or an event with all its shifts. */
export type PublishTarget =
  | { kind: 'shifts'; shiftIds: readonly string[] }
  | { kind: 'event'; eventId: string };

export type PublishResult = Schemas['PublishShiftsResult'];

/**
 * Publishes in one call (`POST /shifts/publish` with `include_event`: the event and its
 * shifts in one transaction), or with `dryRun` answers what that call would do: the
 * people whose published week changes and the webhook events it would queue. The
 * preview and the publication are the same call, so they cannot disagree.
 */
export function publish(api: Api, target: PublishTarget, dryRun = false): Promise<PublishResult> {
  const chosen = target.kind === 'event' ? { event_id: target.eventId } : { shift_ids: [...target.shiftIds] };
  return expectData(
    api.POST('/api/v1/shifts/publish', {
      body: { ...chosen, include_event: true, ...(dryRun ? { dry_run: true } : {}) },
    }),
  );
}
