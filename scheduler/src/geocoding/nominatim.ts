import type { FastifyBaseLogger } from 'fastify';
import { fetchJson } from '../outbound/fetch-json.ts';
import type { Address, Coordinates, Geocoder } from './geocoder.ts';

/**
 * A Nominatim-compatible HTTP geocoder (Nominatim itself, or Photon/LocationIQ-style
 * services speaking its `/search` API). Uses the structured query and `format=jsonv2`;
 * the documented answer is an array of places with `lat` and `lon` as decimal strings.
 */
export interface NominatimOptions {
  baseUrl: URL;
  timeoutMs: number;
  userAgent: string;
  logger?: FastifyBaseLogger | undefined;
  /** An answer larger than this is abandoned (one place is a few hundred bytes). */
  maxBytes?: number;
}

function coordinate(value: unknown, limit: number): number | null {
  const number = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  return Number.isFinite(number) && Math.abs(number) <= limit ? number : null;
}

export function searchUrl(baseUrl: URL, address: Address): URL {
  const url = new URL('search', baseUrl.href.endsWith('/') ? baseUrl : new URL(`${baseUrl.href}/`));
  url.searchParams.set('format', 'jsonv2');
  url.searchParams.set('limit', '1');
  url.searchParams.set('street', address.street);
  url.searchParams.set('city', address.city);
  if (address.postalCode) url.searchParams.set('postalcode', address.postalCode);
  if (address.country) url.searchParams.set('country', address.country);
  return url;
}

export function createNominatimGeocoder(options: NominatimOptions): Geocoder {
  return {
    name: 'nominatim',
    async geocode(address: Address): Promise<Coordinates | null> {
      const url = searchUrl(options.baseUrl, address);
      try {
        // The deadline covers the body too, and the body is capped: an endless or
        // trickling answer costs at most timeoutMs and maxBytes.
        const body = await fetchJson(url, {
          timeoutMs: options.timeoutMs,
          maxBytes: options.maxBytes ?? 256 * 1024,
          headers: { 'user-agent': options.userAgent },
        });
        const first: unknown = Array.isArray(body) ? body[0] : undefined;
        if (!first || typeof first !== 'object') return null;
        const lat = coordinate((first as Record<string, unknown>).lat, 90);
        const lng = coordinate((first as Record<string, unknown>).lon, 180);
        return lat === null || lng === null ? null : { lat, lng };
      } catch (error) {
        options.logger?.warn(
          { err: error },
          'geocoder unreachable, slow or malformed; location kept without coordinates',
        );
        return null;
      }
    },
  };
}
