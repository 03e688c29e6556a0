import { expect } from 'vitest';
import { type Caller, type TestContext, uniqueName } from './context.ts';

/** Builders for scheduling tests, all through the API, each checking its own answer. */

export async function created(
  caller: Caller,
  url: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown> & { id: string }> {
  const response = await caller.request('POST', url, body);
  expect(response.statusCode, `${url}: ${response.body}`).toBe(201);
  return response.json();
}

export async function action(caller: Caller, url: string): Promise<Record<string, unknown> & { id: string }> {
  const response = await caller.request('POST', url);
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.json();
}

export async function newRole(admin: Caller, name = 'Cook'): Promise<string> {
  return (await created(admin, '/api/v1/roles', { name })).id;
}

export async function qualify(admin: Caller, user: Caller, roleId: string): Promise<void> {
  const response = await admin.request('POST', `/api/v1/users/${user.userId}/qualifications/${roleId}`);
  expect(response.statusCode, response.body).toBe(204);
}

export async function newEvent(
  admin: Caller,
  options: { publish?: boolean; starts_at?: string; ends_at?: string } = {},
): Promise<string> {
  const event = await created(admin, '/api/v1/events', {
    name: 'Festival',
    starts_at: options.starts_at ?? '2030-07-01T00:00:00Z',
    ends_at: options.ends_at ?? '2030-07-08T00:00:00Z',
  });
  if (options.publish ?? true) await action(admin, `/api/v1/events/${event.id}/publish`);
  return event.id;
}

export interface ShiftWithSlots {
  id: string;
  slots: string[];
}

/** A shift of `eventId` with one slot per capacity given, published unless told otherwise. */
export async function newShift(
  admin: Caller,
  eventId: string,
  options: { roleId: string; capacities?: number[]; starts_at?: string; ends_at?: string; publish?: boolean },
): Promise<ShiftWithSlots> {
  const shift = await created(admin, '/api/v1/shifts', {
    event_id: eventId,
    name: 'Bar',
    starts_at: options.starts_at ?? '2030-07-02T10:00:00Z',
    ends_at: options.ends_at ?? '2030-07-02T14:00:00Z',
    slots: (options.capacities ?? [2]).map((capacity) => ({ role_id: options.roleId, capacity })),
  });
  if (options.publish ?? true) await action(admin, `/api/v1/shifts/${shift.id}/publish`);
  const slots = (await admin.request('GET', `/api/v1/shifts/${shift.id}/slots`)).json() as { id: string }[];
  return { id: shift.id, slots: slots.map((slot) => slot.id) };
}

/** The tenant name behind a caller, read from its token (to mint more users of that tenant). */
export function tenantOf(caller: Caller): string {
  const payload = JSON.parse(Buffer.from(caller.token.split('.')[1] ?? '', 'base64url').toString());
  return String(payload.tenant_id);
}

/** Another employee of `admin`'s tenant, new to it, qualified for `roleId` when one is given. */
export async function newColleague(ctx: TestContext, admin: Caller, roleId?: string): Promise<Caller> {
  const colleague = await ctx.caller('employee', tenantOf(admin), uniqueName('colleague'));
  if (roleId) await qualify(admin, colleague, roleId);
  return colleague;
}
