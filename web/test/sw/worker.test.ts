import { afterAll, describe, expect, it } from 'vitest';
import { type PushService, startPushService } from '../../../scheduler/test/support/push-service.ts';
import { runsIf } from '../../../scripts/test-skip.ts';
import { demo, signIn } from '../support/app.ts';
import { chromiumAvailable, NEEDS_CHROMIUM, phone } from '../support/browser.ts';
import { useStage } from '../support/stage.ts';
import { apiAs } from '../support/tokens.ts';

/**
 * Notifications end to end, but for the browser's push service, which this machine cannot
 * reach: the page's PushManager answers with a subscription of a local push service (the
 * one the scheduler's own push tests use). So the app's registration is real, the
 * scheduler's encrypted delivery is real and decrypted there, and the decrypted message is
 * handed to the service worker through Chromium's DevTools protocol
 * (ServiceWorker.deliverPushMessage), as a push service would.
 */
let push: PushService;
const stage = useStage(async () => {
  push = await startPushService({ plain: true });
  return { OUTBOUND_ALLOWED_HOSTS: new URL(push.origin).host };
});
afterAll(async () => {
  await push?.close();
});

describe('notifications in the staff app', runsIf(chromiumAvailable, NEEDS_CHROMIUM), () => {
  it('registers this browser, shows each push as the API wrote it, and a tap opens the shift', async () => {
    const subscription = push.subscribe();
    const { context, page } = await phone(stage.browser, { base: stage.scheduler.base });
    // The browser's push service, replaced by the local one (see above).
    await context.addInitScript((body: { endpoint: string; keys: { p256dh: string; auth: string } }) => {
      const fake = {
        endpoint: body.endpoint,
        expirationTime: null,
        options: {},
        getKey: () => null,
        toJSON: () => ({ endpoint: body.endpoint, expirationTime: null, keys: body.keys }),
        unsubscribe: async () => true,
      };
      let subscribed = false;
      PushManager.prototype.subscribe = async function subscribe() {
        subscribed = true;
        return fake as unknown as PushSubscription;
      };
      PushManager.prototype.getSubscription = async function getSubscription() {
        return (subscribed ? fake : null) as PushSubscription | null;
      };
    }, subscription.body);
    await signIn(page, stage.scheduler.base, demo.maria);
    await page.getByRole('link', { name: 'Me', exact: true }).click();
    await page.getByRole('button', { name: 'Enable notifications' }).click();
    await expect
      .poll(() =>
        page.getByRole('status').filter({ hasText: 'Notifications are on for this browser.' }).count(),
      )
      .toBe(1);
    await expect.poll(() => page.getByText('(this browser)').count()).toBe(1);

    // What the app registered is what the browser handed it.
    const maria = await apiAs(stage.scheduler, 'demo-employee-1', 'employee');
    const browsers = await maria<{ endpoint: string }[]>('GET', '/push-subscriptions');
    expect(browsers.body.map((b) => b.endpoint)).toEqual([subscription.body.endpoint]);

    // An admin places Maria on an open seat: the API notifies her.
    const admin = await apiAs(stage.scheduler, 'demo-admin', 'admin');
    const settings = await admin<Record<string, unknown>>('GET', '/tenant/settings');
    await admin('PATCH', '/tenant/settings', { ...settings.body, notify_on_assignment: true });
    const me = await maria<{ id: string }>('GET', '/me');
    const open = await maria<{ shift: { id: string }; slots: { id: string }[] }[]>('GET', '/me/open-shifts');
    const target = open.body[0]!;
    const placed = await admin('POST', `/shifts/${target.shift.id}/slots/${target.slots[0]!.id}/assign`, {
      user_id: me.body.id,
    });
    expect(placed.status).toBe(201);
    await expect.poll(() => push.received.length).toBe(1);
    const message = push.received[0]!.payload as { title: string; body: string; data: { shift_id: string } };
    expect(message.data.shift_id).toBe(target.shift.id);

    // The push service hands the message to the browser, once its worker is active: a push
    // to a worker still installing (keeping the app's files) would be lost, as in a browser.
    await expect
      .poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state ?? 'none'))
      .toBe('activated');
    const cdp = await context.newCDPSession(page);
    const registration = new Promise<string>((resolve) =>
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const found = registrations.find(
          (r) => r.scopeURL === `${stage.scheduler.base}/app/` && !r.isDeleted,
        );
        if (found) resolve(found.registrationId);
      }),
    );
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.deliverPushMessage', {
      origin: stage.scheduler.base,
      registrationId: await registration,
      data: JSON.stringify(message),
    });
    const shown = () =>
      page.evaluate(async () =>
        (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({
          title: n.title,
          body: n.body,
          url: (n.data as { url: string }).url,
        })),
      );
    await expect.poll(shown).toHaveLength(1);
    expect(await shown()).toEqual([
      {
        title: message.title,
        body: message.body,
        url: `${stage.scheduler.base}/app/shifts/${target.shift.id}`,
      },
    ]);

    // A tap: the worker's click handler brings the app to the shift.
    const [worker] = context.serviceWorkers();
    await worker!.evaluate(async () => {
      // The worker's globals (this file is typed for the page).
      const scope = globalThis as unknown as {
        registration: { getNotifications(): Promise<unknown[]> };
        dispatchEvent(event: Event): boolean;
        NotificationEvent: new (type: string, init: { notification: unknown }) => Event;
      };
      const [notification] = await scope.registration.getNotifications();
      scope.dispatchEvent(new scope.NotificationEvent('notificationclick', { notification }));
    });
    await page.waitForURL(`${stage.scheduler.base}/app/shifts/${target.shift.id}`);
    await page.getByRole('heading', { level: 1, name: 'Shift' }).waitFor();
    await context.close();
  });
});
