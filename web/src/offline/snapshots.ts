/**
 * What the app last read, kept on this device per signed-in user, so My shifts and Open
 * shifts show with the network off ("last synced"). Only reads are kept: a change is never
 * queued for later (a claim made offline could not be honoured when the phone reconnects).
 */
const prefix = 'shifts.snapshot.';

export interface Snapshot<T> {
  data: T;
  /** When it was read from the server (ms since the epoch). */
  syncedAt: number;
}

const keyOf = (user: string, name: string) => `${prefix}${user}.${name}`;

export function saveSnapshot<T>(user: string, name: string, data: T, now = Date.now()): void {
  try {
    localStorage.setItem(keyOf(user, name), JSON.stringify({ data, syncedAt: now } satisfies Snapshot<T>));
  } catch {
    // A full storage only costs the offline copy.
  }
}

export function readSnapshot<T>(user: string, name: string): Snapshot<T> | null {
  const raw = localStorage.getItem(keyOf(user, name));
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as Snapshot<T>;
  } catch {
    return null;
  }
}

/** Signing out forgets every user's copies on this device. */
export function forgetSnapshots(): void {
  for (const key of Object.keys(localStorage)) if (key.startsWith(prefix)) localStorage.removeItem(key);
}
