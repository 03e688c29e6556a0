/**
 * The push service of bench/push-fanout, in a process of its own so that its work
 * (VAPID checks, decryption) does not count against the sender being measured. It is the
 * scheduler tests' local push service: every message must carry a VAPID JWT that
 * verifies and a payload that decrypts. Talks to run.ts over IPC:
 *   -> { subscriptions: [{ id, body }], origin, ca }   once started
 *   <- 'count'   -> { received, refused, arrivals }      and resets them; arrivals are
 *                   [notification id, ms since the epoch] per message
 *   <- 'stop'
 */
import { startPushService } from '../../scheduler/test/support/push-service.ts';

const count = Number(process.argv[2] ?? 2000);
const service = await startPushService();
const subscriptions = Array.from({ length: count }, () => service.subscribe());
process.send?.({ origin: service.origin, ca: service.ca, subscriptions });

process.on('message', async (message) => {
  if (message === 'count') {
    process.send?.({
      received: service.received.length,
      refused: service.refused.length,
      arrivals: service.received.map((r) => [(r.payload as { id: string }).id, r.at]),
    });
    service.received.length = 0;
    service.refused.length = 0;
  } else if (message === 'stop') {
    await service.close();
    process.exit(0);
  }
});
