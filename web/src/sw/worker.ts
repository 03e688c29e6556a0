/// <reference lib="webworker" />
/**
 * The staff app's service worker (built to /app/sw.js, scope /app/).
 *
 * - Offline starts: the app's files are kept at install (the build's asset manifest) and
 *   as they are fetched; pages are read from the network first, the kept copy when it is
 *   unreachable. API answers are not kept here: the app keeps its own last reads, per user.
 * - Notifications: each push is shown with the text the API composed; a tap opens the
 *   shift it is about (or the app): in the app's open window, else a new one.
 */
declare const self: ServiceWorkerGlobalScope;

const cacheName = 'shifts-app';
const scope = new URL(self.registration.scope);
const page = new URL('./', scope).href;

async function keepAppFiles(): Promise<void> {
  const cache = await caches.open(cacheName);
  const manifest = (await (
    await fetch(new URL('asset-manifest.json', scope), { cache: 'no-store' })
  ).json()) as Record<string, { file: string; css?: string[]; assets?: string[] }>;
  const files = new Set<string>([
    page,
    new URL('manifest.webmanifest', scope).href,
    new URL('icon.svg', scope).href,
  ]);
  for (const chunk of Object.values(manifest)) {
    for (const file of [chunk.file, ...(chunk.css ?? []), ...(chunk.assets ?? [])]) {
      if (file !== 'sw.js') files.add(new URL(file, scope).href);
    }
  }
  await cache.addAll([...files]);
}

self.addEventListener('install', (event) => {
  event.waitUntil(keepAppFiles().then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== scope.origin || !url.pathname.startsWith(scope.pathname))
    return;
  if (request.mode === 'navigate') {
    // Every page of the app is index.html; the network's copy is kept for next time.
    event.respondWith(
      fetch(request)
        .then(async (response) => {
          if (response.ok) await (await caches.open(cacheName)).put(page, response.clone());
          return response;
        })
        .catch(async () => (await caches.match(page)) ?? Response.error()),
    );
    return;
  }
  if (url.pathname.startsWith(`${scope.pathname}assets/`)) {
    // Hashed names never change: the kept copy is always right.
    event.respondWith(
      caches.match(request).then(
        (kept) =>
          kept ??
          fetch(request).then(async (response) => {
            if (response.ok) await (await caches.open(cacheName)).put(request, response.clone());
            return response;
          }),
      ),
    );
  }
});

/** What the API pushes: the stored notification (scheduler/src/push/delivery.ts). */
interface PushedNotification {
  id?: string;
  title?: string;
  body?: string | null;
  data?: { shift_id?: string } | null;
}

self.addEventListener('push', (event) => {
  let message: PushedNotification = {};
  try {
    message = (event.data?.json() ?? {}) as PushedNotification;
  } catch {
    message = { body: event.data?.text() ?? null };
  }
  const shift = message.data?.shift_id;
  const url = shift ? new URL(`shifts/${encodeURIComponent(shift)}`, scope).href : page;
  event.waitUntil(
    self.registration.showNotification(message.title ?? 'Shifts', {
      body: message.body ?? '',
      icon: new URL('icon.svg', scope).href,
      ...(message.id ? { tag: message.id } : {}),
      data: { url },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = (event.notification.data as { url?: string } | null)?.url ?? page;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const open = windows.find((client) => client.url.startsWith(page));
      if (open) {
        // The app routes itself (src/app.tsx), so a window it has not reloaded keeps its
        // state; focusing needs the tap's permission, and the route is taken either way.
        open.postMessage({ type: 'open', url });
        await open.focus().catch(() => undefined);
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
