import { holdUpcomingSlots, releaseSeatsOfDeactivated } from './assignments/reactions.ts';
import { notifyingChangeTypes, webhookChangeTypes } from './changes/catalogue.ts';
import { on, type Reactions } from './changes/unit-of-work.ts';
import type { Deps } from './deps.ts';
import { notifyPeople } from './notifications/reactions.ts';
import { cancelOffersOfDeactivated, settleOffersOfLeavingSeats } from './offers/reactions.ts';
import { forgetBrowsers, queuePushDeliveries } from './push/reactions.ts';
import { announceShiftsOfPublishedEvent } from './shifts/reactions.ts';
import { queueWebhookDeliveries } from './webhooks/reactions.ts';

/**
 * Who reacts to what: the one list. A feature records what happened (src/changes/); the
 * features that care react here, inside the change's transaction, in this order. A
 * removal records `seats.leaving` before its rows go and itself after, so a subscriber
 * hears of the cancelled offers before the seat's removal, as they happened.
 */
export const reactions: Reactions<Deps> = [
  // A deactivated user's upcoming seats: their slots held first (as a claim takes a slot
  // before anything else), their live offers cancelled, then the seats freed (recorded
  // as `seats.released`) …
  on(['user.deactivated'], 'assignments', holdUpcomingSlots),
  on(['user.deactivated'], 'offers', cancelOffersOfDeactivated),
  on(['user.deactivated'], 'assignments', releaseSeatsOfDeactivated),
  // … and nothing is pushed to their browsers any more.
  on(['user.deactivated'], 'push', forgetBrowsers),
  // Seats about to go take their live offers with them.
  on(['seats.leaving'], 'offers', settleOffersOfLeavingSeats),
  // Subscribers hear of every change the catalogue gives a webhook event.
  on(webhookChangeTypes, 'webhooks', queueWebhookDeliveries),
  // An event published on its own reveals its published shifts, announced after it
  // (recorded as `shifts.revealed`, which the lines above and below hear of in turn).
  on(['event.published'], 'shifts', announceShiftsOfPublishedEvent),
  // People are told of every change the catalogue gives a notification.
  on(notifyingChangeTypes, 'notifications', notifyPeople),
  // Each notification goes to every browser of its person.
  on(['notifications.staged'], 'push', queuePushDeliveries),
];
