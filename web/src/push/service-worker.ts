import { appBase } from '../config.ts';

/**
 * The service worker (src/sw/worker.ts, built to /app/sw.js): keeps the app's files for
 * offline starts and shows pushed notifications. Its scope is the app, nothing else.
 */
export async function registerServiceWorker(): Promise<ServiceWorkerRegistration | null> {
  if (!('serviceWorker' in navigator)) return null;
  try {
    return await navigator.serviceWorker.register(new URL('sw.js', appBase).href, {
      scope: appBase,
      type: 'module',
    });
  } catch {
    return null;
  }
}
