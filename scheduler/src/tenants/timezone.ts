import { Temporal } from 'temporal-polyfill';

/**
 * The IANA name of a time zone in its canonical case, or null when the time zone database
 * does not know it. The name the admin chose is kept (`Europe/Kyiv` stays Kyiv, not the
 * `Europe/Kiev` an ICU lookup answers; both name the same rules): Temporal keeps the
 * identifier it was given and only normalises its case (`europe/kyiv` -> `Europe/Kyiv`).
 */
export function canonicalTimeZone(zone: string): string | null {
  try {
    return Temporal.Now.zonedDateTimeISO(zone).timeZoneId;
  } catch {
    return null;
  }
}
