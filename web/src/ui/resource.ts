import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { NetworkError } from '../api/client.ts';
import { useApp } from '../app-context.ts';
import { readSnapshot, saveSnapshot } from '../offline/snapshots.ts';

export type Resource<T> =
  | { state: 'loading' }
  | { state: 'ready'; data: T; syncedAt: number; offline: boolean }
  | { state: 'failed'; error: unknown; offline: boolean };

/**
 * Data a screen reads, with `reload`. With `keep`, the last answer is kept on the device
 * and shown, marked with when it was synced, whenever the server cannot be reached.
 * Only the answer to the latest read is shown: when the inputs change while a read is on
 * its way (a filter changed twice), an earlier answer arriving last is dropped.
 */
export function useResource<T>(
  load: () => Promise<T>,
  deps: unknown[],
  keep?: string,
): [Resource<T>, () => Promise<void>] {
  const { userKey } = useApp();
  const [resource, setResource] = useState<Resource<T>>(() => {
    const snapshot = keep ? readSnapshot<T>(userKey, keep) : null;
    return snapshot ? { state: 'ready', ...snapshot, offline: !navigator.onLine } : { state: 'loading' };
  });
  const latest = useRef(0);
  const run = useCallback(async () => {
    const mine = ++latest.current;
    try {
      if (!navigator.onLine) throw new NetworkError('offline');
      const data = await load();
      if (mine !== latest.current) return;
      const syncedAt = Date.now();
      if (keep) saveSnapshot(userKey, keep, data, syncedAt);
      setResource({ state: 'ready', data, syncedAt, offline: false });
    } catch (error) {
      if (mine !== latest.current) return;
      const offline = error instanceof NetworkError;
      const snapshot = offline && keep ? readSnapshot<T>(userKey, keep) : null;
      setResource(
        snapshot ? { state: 'ready', ...snapshot, offline: true } : { state: 'failed', error, offline },
      );
    }
  }, [userKey, keep, ...deps]);
  useEffect(() => {
    void run();
    const again = () => void run();
    window.addEventListener('online', again);
    window.addEventListener('offline', again);
    return () => {
      window.removeEventListener('online', again);
      window.removeEventListener('offline', again);
    };
  }, [run]);
  return [resource, run];
}
