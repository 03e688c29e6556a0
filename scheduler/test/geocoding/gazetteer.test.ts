import { beforeAll, describe, expect, it } from 'vitest';
import { createGazetteerGeocoder } from '../../src/geocoding/gazetteer.ts';

describe('gazetteer geocoder (offline default)', () => {
  const gazetteer = createGazetteerGeocoder();
  const at = (city: string, country: string | null = null) =>
    gazetteer.geocode({ street: 'Main Street 1', city, postalCode: null, country });
  // The table costs seconds of CPU to load, more on a loaded machine: a hook's time (60 s),
  // not that of whichever test (in shuffled order) asks first.
  beforeAll(() => gazetteer.loaded);

  it('loads its table when created, before anyone asks', async () => {
    await expect(gazetteer.loaded).resolves.toBeUndefined();
  });

  it.each([
    ['München', 48.14, 11.58],
    ['Muenchen', 48.14, 11.58],
    ['Munich', 48.14, 11.58],
    ['Wien', 48.21, 16.37],
    ['Köln', 50.94, 6.95],
    ['Cologne', 50.94, 6.95],
    ['New York', 40.71, -74.01],
    ['Praha', 50.09, 14.42],
  ])('finds %s by a city-only query, alternate and local names included', async (city, lat, lng) => {
    const place = await at(city);
    expect(place?.lat).toBeCloseTo(lat, 1);
    expect(place?.lng).toBeCloseTo(lng, 1);
  });

  it('resolves a city to its coordinates', async () => {
    const berlin = await at('Berlin', 'DE');
    expect(berlin?.lat).toBeCloseTo(52.52, 1);
    expect(berlin?.lng).toBeCloseTo(13.41, 1);
  });

  it('ignores case and accents', async () => {
    expect(await at('zurich')).toEqual(await at('Zürich'));
    expect((await at('ZÜRICH', 'CH'))?.lat).toBeCloseTo(47.37, 1);
  });

  it('picks the most populous place without a country, and the named country with one', async () => {
    expect((await at('Paris'))?.lng).toBeCloseTo(2.35, 1);
    expect((await at('Paris', 'US'))?.lng).toBeLessThan(-50);
  });

  it('returns null for a place it does not know', async () => {
    expect(await at('Nowhere-upon-Nothing')).toBeNull();
    expect(await at('Berlin', 'JP')).toBeNull();
  });
});
