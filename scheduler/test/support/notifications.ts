import { expect } from 'vitest';
import { type Caller, uniqueName } from './context.ts';
import type { PushService } from './push-service.ts';
import { created, newEvent, newRole, newShift, qualify } from './scheduling.ts';

/**
 * Steps the notification tests share (test/notifications/). `current` names the admin
 * and the push service a test works with at the moment of each step: a test may switch
 * to a tenant of another app halfway.
 */
export function notificationSteps(current: () => { admin: Caller; push: PushService }) {
  /** Switches notify_on_assignment for the admin's tenant. */
  async function notifyOn(enabled = true) {
    const response = await current().admin.request('PATCH', '/api/v1/tenant/settings', {
      time_tracking_enabled: false,
      notify_on_assignment: enabled,
    });
    expect(response.statusCode, response.body).toBe(200);
  }

  /** A published shift the worker may hold, and a function assigning them to it. */
  async function shiftFor(worker: Caller, start = '2030-07-02T10:00:00Z', end = '2030-07-02T14:00:00Z') {
    const { admin } = current();
    const role = await newRole(admin, uniqueName('Cook'));
    await qualify(admin, worker, role);
    const event = await newEvent(admin);
    const shift = await newShift(admin, event, {
      roleId: role,
      capacities: [2],
      starts_at: start,
      ends_at: end,
    });
    const assign = () =>
      created(current().admin, `/api/v1/shifts/${shift.id}/slots/${shift.slots[0]}/assign`, {
        user_id: worker.userId,
      });
    return { shift, assign };
  }

  /** A browser of the caller's, registered with the API, as the push service knows it. */
  async function subscribe(caller: Caller) {
    const subscription = current().push.subscribe();
    const response = await caller.request('POST', '/api/v1/push-subscriptions', subscription.body);
    expect(response.statusCode, response.body).toBe(201);
    return { ...subscription, apiId: response.json().id as string };
  }

  return { notifyOn, shiftFor, subscribe };
}

export const notificationsOf = async (caller: Caller) =>
  (await caller.request('GET', '/api/v1/notifications')).json() as {
    id: string;
    type: string;
    read_at: string | null;
  }[];
