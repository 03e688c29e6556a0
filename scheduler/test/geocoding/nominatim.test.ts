import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createNominatimGeocoder } from '../../src/geocoding/nominatim.ts';
import {
  fakeNominatimGeocoder,
  type NominatimFake,
  startNominatimFake,
} from '../support/nominatim-server.ts';

describe('Nominatim-compatible geocoder', () => {
  let fake: NominatimFake;
  beforeAll(async () => {
    fake = await startNominatimFake();
  });
  afterAll(async () => fake?.close());
  beforeEach(() => {
    fake.behaviour = 'ok';
    fake.requests.length = 0;
  });

  const geocoder = () => fakeNominatimGeocoder(fake);
  const address = { street: 'Pariser Platz 1', city: 'Berlin', postalCode: '10117', country: 'DE' };

  it('sends a structured jsonv2 query with a User-Agent and parses the documented answer', async () => {
    expect(await geocoder().geocode(address)).toEqual({ lat: 52.5162699, lng: 13.3777034 });
    const sent = fake.requests[0];
    expect(sent?.pathname).toBe('/search');
    expect(Object.fromEntries(sent?.searchParams ?? [])).toEqual({
      format: 'jsonv2',
      limit: '1',
      street: 'Pariser Platz 1',
      city: 'Berlin',
      postalcode: '10117',
      country: 'DE',
    });
    expect(fake.userAgents[0]).toBe('scheduler-test/1');
  });

  it.each(['empty', 'error', 'garbage', 'slow', 'endless', 'trickle'] as const)(
    'returns null when the server is %s',
    async (behaviour) => {
      fake.behaviour = behaviour;
      // The slow server answers after a minute: only the geocoder's own timeout ends this in time.
      expect(await geocoder().geocode(address)).toBeNull();
    },
  );

  it('returns null when nothing listens', async () => {
    const dead = createNominatimGeocoder({
      baseUrl: new URL('http://127.0.0.1:9/'),
      timeoutMs: 500,
      userAgent: 'x',
    });
    expect(await dead.geocode(address)).toBeNull();
  });
});
