import type { ChangeOf } from '../changes/change.ts';
import type { InUnit } from '../changes/unit-of-work.ts';
import type { Deps } from '../deps.ts';
import { announceVisible } from './publication.ts';

/**
 * An event published on its own makes its published shifts visible to staff: they are
 * announced now, in the event's transaction (after the event itself: src/reactions.ts).
 * An event published with shifts in one call (`plan`) is announced with them by that call.
 */
export async function announceShiftsOfPublishedEvent(
  tx: InUnit<Deps>,
  change: ChangeOf<'event.published'>,
): Promise<void> {
  if (change.plan) return;
  await announceVisible(tx, [], [change.event.id]);
}
