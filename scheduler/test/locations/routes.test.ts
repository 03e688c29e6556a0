import { beforeEach, describe, expect, it } from 'vitest';
import { createGazetteerGeocoder } from '../../src/geocoding/gazetteer.ts';
import {
  type Caller,
  FORBIDDEN_BODY,
  routeCallers,
  useTestContext,
  useTestContextWith,
} from '../support/context.ts';
import { fakeNominatimGeocoder, startNominatimFake } from '../support/nominatim-server.ts';

describe('locations routes', () => {
  const t = useTestContextWith(startNominatimFake, (fake) => ({ geocoder: fakeNominatimGeocoder(fake) }));
  let admin: Caller;
  let employee: Caller;
  let otherAdmin: Caller;

  beforeEach(async () => {
    t.server.behaviour = 'ok';
    t.server.requests.length = 0;
    ({ admin, employee, otherAdmin } = await routeCallers(t.ctx));
  });

  it('creates a location and fills lat/lng from the geocoder when street and city are present', async () => {
    const response = await admin.request('POST', '/api/v1/locations', {
      name: 'Gate',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      postal_code: '10117',
      country: 'DE',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      tenant_id: admin.tenantId,
      name: 'Gate',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      postal_code: '10117',
      country: 'DE',
      lat: 52.5162699,
      lng: 13.3777034,
      created_at: expect.stringMatching(/Z$/),
    });
  });

  it('does not geocode without a street', async () => {
    const response = await admin.request('POST', '/api/v1/locations', {
      name: 'Somewhere in Berlin',
      city: 'Berlin',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ lat: null, lng: null, street: null });
    expect(t.server.requests).toHaveLength(0);
  });

  it.each(['slow', 'error'] as const)(
    'still creates the location, without coordinates, when the geocoder is %s',
    async (behaviour) => {
      t.server.behaviour = behaviour;
      const response = await admin.request('POST', '/api/v1/locations', {
        name: `Hall ${behaviour}`,
        street: 'A 1',
        city: 'Berlin',
      });
      expect(response.statusCode).toBe(201);
      expect(response.json()).toMatchObject({ name: `Hall ${behaviour}`, lat: null, lng: null });
    },
  );

  it('lists the tenant locations for employees too, never another tenant', async () => {
    await admin.request('POST', '/api/v1/locations', { name: 'Gate' });
    await otherAdmin.request('POST', '/api/v1/locations', { name: 'Elsewhere' });
    const response = await employee.request('GET', '/api/v1/locations');
    expect(response.statusCode).toBe(200);
    const names = response.json().map((l: { name: string }) => l.name);
    expect(names).toContain('Gate');
    expect(names).not.toContain('Elsewhere');
  });

  it('answers the fixed 403 to an employee creating or deleting', async () => {
    const created = (await admin.request('POST', '/api/v1/locations', { name: 'Protected' })).json();
    for (const response of [
      await employee.request('POST', '/api/v1/locations', { name: 'Mine' }),
      await employee.request('DELETE', `/api/v1/locations/${created.id}`),
    ]) {
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual(FORBIDDEN_BODY);
    }
    const names = (await admin.request('GET', '/api/v1/locations'))
      .json()
      .map((l: { name: string }) => l.name);
    expect(names).toContain('Protected');
    expect(names).not.toContain('Mine');
  });

  it('deletes with 204; another tenant gets 404 and the location survives', async () => {
    const created = (await admin.request('POST', '/api/v1/locations', { name: 'Short' })).json();
    const foreign = await otherAdmin.request('DELETE', `/api/v1/locations/${created.id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'location not found' } });
    const response = await admin.request('DELETE', `/api/v1/locations/${created.id}`);
    expect(response.statusCode).toBe(204);
    expect((await admin.request('DELETE', `/api/v1/locations/${created.id}`)).statusCode).toBe(404);
  });

  it('trims every field, stores blank ones as null, and geocodes the trimmed address', async () => {
    const response = await admin.request('POST', '/api/v1/locations', {
      name: '  Gate ',
      street: ' Pariser Platz 1\t',
      city: '  Berlin ',
      postal_code: '   ',
      country: ' DE ',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      name: 'Gate',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      postal_code: null,
      country: 'DE',
      lat: 52.5162699,
      lng: 13.3777034,
    });
    expect(t.server.requests).toHaveLength(1);
    expect(Object.fromEntries(t.server.requests[0]?.searchParams ?? [])).toEqual({
      format: 'jsonv2',
      limit: '1',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      country: 'DE',
    });
  });

  it('passes the postal code to the geocoder too', async () => {
    await admin.request('POST', '/api/v1/locations', {
      name: 'Gate',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      postal_code: ' 10117 ',
    });
    expect(Object.fromEntries(t.server.requests[0]?.searchParams ?? [])).toMatchObject({
      postalcode: '10117',
    });
  });

  it.each([
    ['without a city', { street: 'Pariser Platz 1' }],
    ['with a blank street', { street: '  ', city: 'Berlin' }],
    ['with a blank city', { street: 'Pariser Platz 1', city: ' ' }],
  ])('does not geocode %s', async (_label, address) => {
    const response = await admin.request('POST', '/api/v1/locations', { name: 'Somewhere', ...address });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ lat: null, lng: null });
    expect(t.server.requests).toHaveLength(0);
  });

  it('lists by name, each location as it was created', async () => {
    const created = [];
    for (const name of ['Zoo', 'Arena', 'Mall']) {
      created.push((await admin.request('POST', '/api/v1/locations', { name, city: 'Berlin' })).json());
    }
    const response = await employee.request('GET', '/api/v1/locations');
    expect(response.json()).toEqual([created[1], created[2], created[0]]);
  });

  it('answers 404 for a malformed or unknown id', async () => {
    for (const id of ['not-a-uuid', 'ffffffffffffffffffffffffffffffff']) {
      const response = await admin.request('DELETE', `/api/v1/locations/${id}`);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'location not found' } });
    }
  });

  it.each([
    [{}, 'name: is required'],
    [{ name: 'x', city: 12 }, 'city: must be string,null'],
    [{ name: 'x', lat: 1 }, 'lat: is not an allowed field'],
    [{ name: 'x', postal_code: 'p'.repeat(33) }, 'postal_code: must NOT have more than 32 characters'],
    [{ name: ' ' }, 'name: must not be blank'],
  ])('answers 422 for %j and stores nothing', async (body, message) => {
    const before = (await admin.request('GET', '/api/v1/locations')).json().length;
    const response = await admin.request('POST', '/api/v1/locations', body);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    expect((await admin.request('GET', '/api/v1/locations')).json()).toHaveLength(before);
  });
});

describe('locations with the default offline geocoder', () => {
  // The gazetteer starts loading when it is made: in beforeAll, not while tests are collected.
  const t = useTestContext(() => ({ geocoder: createGazetteerGeocoder() }));

  it('fills lat/lng at city level from a local city name', async () => {
    const { admin } = await t.ctx.freshTenant();
    const response = await admin.request('POST', '/api/v1/locations', {
      name: 'Hall',
      street: 'Marienplatz 1',
      city: 'München',
      country: 'DE',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().lat).toBeCloseTo(48.14, 1);
    expect(response.json().lng).toBeCloseTo(11.58, 1);
  });
});
