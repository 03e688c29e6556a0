import { validationFailed } from '../errors.ts';

/** A time window as the database will hold it, refused (422) unless it ends after it starts. */
export function checkWindow(startsAt: string, endsAt: string): void {
  if (Date.parse(endsAt) <= Date.parse(startsAt))
    throw validationFailed('ends_at', 'must be after starts_at');
}
