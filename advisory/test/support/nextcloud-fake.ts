import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextcloudApiSource } from '../../src/inventory/config.ts';
import { type AnswerGate, answerGate } from './answer-gate.ts';
import { occApps, occStatus } from './occ-fake.ts';
import { listenTls } from './tls.ts';

/**
 * A Nextcloud server on this machine, for the `nextcloud-api` adapter's tests: HTTPS with
 * a self-signed certificate, and the documented answers of what the adapter reads:
 *   GET /status.php  (no authentication; nextcloud/server status.php: the keys `occ
 *     status` prints: installed, maintenance, needsDbUpgrade, version, versionstring,
 *     edition, productname, extendedSupport)
 *   GET /ocs/v2.php/cloud/apps?filter=enabled&format=json
 *   GET /ocs/v2.php/cloud/apps/{appid}?format=json
 * The OCS endpoints as Nextcloud's admin manual documents them (User provisioning API,
 * "Instruction set for apps": Basic auth, the `OCS-APIRequest: true` header, admin only)
 * and nextcloud/server apps/provisioning_api/lib/Controller/AppsController.php answers
 * them: the OCS envelope {"ocs":{"meta":{"status","statuscode","message","totalitems",
 * "itemsperpage"},"data":...}}, data {"apps":[ids]} for the list and the app's info.xml
 * (with `version`) for one app; with v2.php the HTTP status is the OCS status (401 not
 * logged in, 403 not an admin, 404 no such app).
 *
 * It serves the same state the occ fake prints (`occStatus`, `occApps`, or what it is
 * given), so a test can ask one server both ways. It counts the TLS connections it
 * accepts and those still open.
 */
export interface NextcloudState {
  status: Record<string, unknown>;
  apps: { enabled: Record<string, string>; disabled: Record<string, null> };
}

export interface NextcloudFake {
  url: string;
  cert: string;
  fingerprint: string;
  /** An admin and its app password; `alice` has an app password but is no admin. */
  admin: string;
  appPassword: string;
  userPassword: string;
  state: NextcloudState;
  seen: { path: string; authorization: string | undefined; ocsApiRequest: string | undefined }[];
  connections: number;
  /** Ids listed as enabled whose app info is not found (their code was removed): 404. */
  listedWithoutInfo: string[];
  /** Enabled apps whose info request fails on the server (HTTP 500, as an uncaught exception in an app's code answers). */
  failingInfo: string[];
  /**
   * normal; slow (never answers); garbage (an HTML page where JSON was due); not-ocs
   * (JSON without the OCS envelope); oversized (5 MiB of JSON); maintenance (503, as
   * Nextcloud answers OCS requests in maintenance mode).
   */
  mode: 'normal' | 'slow' | 'garbage' | 'not-ocs' | 'oversized' | 'maintenance';
  /** Answers given instead of the usual one, by path and query: odd shapes a test feeds the adapter. */
  answers: Record<string, { status?: number; body: unknown }>;
  /** Each answer waits this long (0 by default): a slow server that does answer. */
  delayMs: number;
  /** TLS connections open now (accepted and not yet closed by either side). */
  open: number;
  /** Holds the requests a test names until it releases them; counts the requests open at once. */
  gate: AnswerGate;
  close(): Promise<void>;
}

const ocs = (statuscode: number, message: string, data: unknown) => ({
  ocs: {
    meta: {
      status: statuscode === 200 ? 'ok' : 'failure',
      statuscode,
      message,
      totalitems: '',
      itemsperpage: '',
    },
    data,
  },
});

/** An app's info.xml as getAppInfo() returns it (abridged to the keys every app has). */
const appInfo = (id: string, version: string) => ({
  id,
  name: id.replaceAll('_', ' '),
  summary: `The ${id} app`,
  description: `The ${id} app for Nextcloud.`,
  version,
  licence: 'agpl',
  author: 'Nextcloud GmbH',
  namespace: id.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase()),
  types: [],
  category: 'office',
  bugs: `https://github.com/nextcloud/${id}/issues`,
  dependencies: { nextcloud: { '@attributes': { 'min-version': '32', 'max-version': '32' } } },
  info: [],
  remote: [],
  public: [],
  repair_steps: {
    install: [],
    'pre-migration': [],
    'post-migration': [],
    'live-migration': [],
    uninstall: [],
  },
  'two-factor-providers': [],
});

export async function startNextcloudFake(
  state: NextcloudState = { status: occStatus, apps: occApps },
): Promise<NextcloudFake> {
  const admin = 'advisory-admin';
  const appPassword = 'Ab3De-fG6hJ-k8LmN-pQ2rS-tU4vW';
  const userPassword = 'Zy9Xw-vU8tS-rQ7pO-nM6lK-jI5hG';
  const fake = {
    state,
    seen: [] as NextcloudFake['seen'],
    connections: 0,
    listedWithoutInfo: [] as string[],
    failingInfo: [] as string[],
    mode: 'normal' as NextcloudFake['mode'],
    delayMs: 0,
    open: 0,
    gate: answerGate(),
    answers: {} as NextcloudFake['answers'],
  };
  const listening = await listenTls('cloud.lan', fake, (request, response) => {
    // Seen when it arrives, not when it is answered.
    const url = new URL(request.url ?? '/', 'https://cloud.lan');
    const header = request.headers['ocs-apirequest'];
    fake.seen.push({
      path: `${url.pathname}${url.search}`,
      authorization: request.headers.authorization,
      ocsApiRequest: typeof header === 'string' ? header : undefined,
    });
    fake.gate.admit(`${url.pathname}${url.search}`, response, () => {
      if (fake.delayMs > 0) setTimeout(() => answer(request, response), fake.delayMs);
      else answer(request, response);
    });
  });
  const answer = (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'https://cloud.lan');
    const header = request.headers['ocs-apirequest'];
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const given = fake.answers[`${url.pathname}${url.search}`];
    if (given) return send(given.status ?? 200, JSON.stringify(given.body));
    if (fake.mode === 'slow') return;
    if (fake.mode === 'garbage') {
      response.writeHead(200, { 'content-type': 'text/html' });
      return response.end('<!DOCTYPE html><html><body>Login – Nextcloud</body></html>');
    }
    if (fake.mode === 'oversized')
      return send(200, JSON.stringify({ ocs: { data: 'x'.repeat(5 * 1024 * 1024) } }));
    if (url.pathname === '/status.php') return send(200, fake.state.status);
    if (!url.pathname.startsWith('/ocs/v2.php/')) return send(404, '<html>Not found</html>');
    if (fake.mode === 'not-ocs') return send(200, { apps: ['files'] });
    if (fake.mode === 'maintenance') return send(503, ocs(503, 'Service unavailable', []));
    // Without the header, an OCS request is taken for a browser's and refused.
    if (header !== 'true') return send(412, { message: 'CSRF check failed' });
    const credentials = Buffer.from((request.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString('utf8')
      .split(':');
    const [user, password] = credentials;
    const isAdmin = user === admin && password === appPassword;
    const isUser = user === 'alice' && password === userPassword;
    if (!isAdmin && !isUser) return send(401, ocs(997, 'Current user is not logged in', []));
    if (!isAdmin) return send(403, ocs(403, 'Logged in account must be an admin', []));
    if (url.pathname === '/ocs/v2.php/cloud/apps') {
      const filter = url.searchParams.get('filter');
      if (filter !== 'enabled') return send(400, ocs(101, '', []));
      return send(
        200,
        ocs(200, 'OK', { apps: [...Object.keys(fake.state.apps.enabled), ...fake.listedWithoutInfo] }),
      );
    }
    const one = /^\/ocs\/v2\.php\/cloud\/apps\/([^/]+)$/.exec(url.pathname);
    if (one) {
      const id = decodeURIComponent(one[1] as string);
      const version = fake.state.apps.enabled[id];
      if (version === undefined) return send(404, ocs(404, 'The request app was not found', []));
      if (fake.failingInfo.includes(id)) return send(500, ocs(996, 'Internal Server Error', []));
      return send(200, ocs(200, 'OK', appInfo(id, version)));
    }
    return send(
      404,
      ocs(
        998,
        'Invalid query, please check the syntax. API specifications are here: http://www.freedesktop.org/wiki/Specifications/open-collaboration-services.',
        [],
      ),
    );
  };
  return Object.assign(fake, listening, { admin, appPassword, userPassword });
}

/** The inventory source for a fake: its address, admin and pinned certificate (the app password in `file`). */
export function nextcloudApiSource(
  fake: NextcloudFake,
  file: string,
  extra: Partial<NextcloudApiSource> = {},
): NextcloudApiSource {
  return {
    type: 'nextcloud-api',
    name: 'cloud',
    url: fake.url,
    user: fake.admin,
    app_password_file: file,
    fingerprint: fake.fingerprint,
    ...extra,
  };
}
