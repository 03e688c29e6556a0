import { type Api, expectData } from '../../api/client.ts';

/** What one Publish makes visible: some shifts, or an event with all its shifts. */
export type PublishTarget =
  | { kind: 'shifts'; shiftIds: readonly string[] }
  | { kind: 'event'; eventId: string; eventIsDraft: boolean };

/** The API takes at most this many shift ids per call. */
const idsPerCall = 1000;

/**
 * Publishes, and answers how many shifts went from draft to published. The one place that
 * knows how: today an event takes `POST /events/{id}/publish` and then `POST /shifts/publish
 * {event_id}` (the event first, so the people a shift.published webhook tells find it);
 * once `POST /shifts/publish` takes `include_event`, this becomes that single call.
 */
export async function publish(api: Api, target: PublishTarget): Promise<number> {
  if (target.kind === 'event') {
    if (target.eventIsDraft) {
      await expectData(api.POST('/api/v1/events/{id}/publish', { params: { path: { id: target.eventId } } }));
    }
    const result = await expectData(
      api.POST('/api/v1/shifts/publish', { body: { event_id: target.eventId } }),
    );
    return result.published;
  }
  let published = 0;
  for (let i = 0; i < target.shiftIds.length; i += idsPerCall) {
    const shift_ids = target.shiftIds.slice(i, i + idsPerCall);
    published += (await expectData(api.POST('/api/v1/shifts/publish', { body: { shift_ids } }))).published;
  }
  return published;
}
