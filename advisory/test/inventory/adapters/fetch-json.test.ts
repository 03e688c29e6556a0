import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdapterError,
  adapterSession,
  apiGetter,
  getJson,
  getText,
} from '../../../src/inventory/adapters/fetch-json.ts';
import { MAX_ANSWER_BYTES, STOPPED } from '../../../src/inventory/adapters/limits.ts';
import { listenTls, makePair } from '../../support/tls.ts';

/**
 * The adapters' GET, against a local server whose answers the test chooses: what is taken
 * (2xx, up to MAX_ANSWER_BYTES, JSON), what is refused and the message that says why,
 * which certificate is trusted, and what a session's end or deadline does to its requests.
 */
const LONG = 30_000;
let base: string;
const seen: IncomingHttpHeaders[] = [];
/** Answers held open until the test lets them go (or the client gives up). */
const held = new Set<ServerResponse>();
const server = createServer((request, response) => {
  seen.push(request.headers);
  const [, route, value] = (request.url ?? '').split('/');
  if (route === 'status') return response.writeHead(Number(value)).end('{}');
  if (route === 'bytes') return response.end('x'.repeat(Number(value)));
  if (route === 'json') return response.end('{"version":"1.2.3"}');
  if (route === 'text') return response.end('<html>1.2.3</html>');
  if (route === 'redirect') return response.writeHead(302, { location: '/json' }).end();
  if (route === 'cut') {
    response.writeHead(200, { 'content-length': '1000' });
    response.write('{"version":');
    return setImmediate(() => response.socket?.destroy());
  }
  held.add(response);
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function withSession<T>(
  run: (session: ReturnType<typeof adapterSession>) => Promise<T>,
  trust = {},
): Promise<T> {
  const session = adapterSession(trust, LONG);
  try {
    return await run(session);
  } finally {
    await session.end();
  }
}

const failure = async (promise: Promise<unknown>): Promise<AdapterError> => {
  const error = await promise.then(
    () => new Error('answered'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AdapterError);
  return error as AdapterError;
};

describe('getText and getJson', () => {
  it('take a 2xx answer, and say the status of any other, with no redirect followed', async () => {
    await withSession(async ({ dispatcher }) => {
      const options = { dispatcher, timeoutMs: LONG };
      expect(await getJson(`${base}/json`, options)).toEqual({ version: '1.2.3' });
      expect(await getText(`${base}/status/200`, options)).toBe('{}');
      expect(await getText(`${base}/status/299`, options)).toBe('{}');
      for (const status of [300, 404, 503]) {
        const error = await failure(getText(`${base}/status/${status}`, options));
        expect(error.message).toBe(`${base}/status/${status} answered HTTP ${status}`);
        expect(error.status).toBe(status);
      }
      const redirect = await failure(getJson(`${base}/redirect`, options));
      expect(redirect.message).toBe(`${base}/redirect answered HTTP 302`);
    });
  });

  it('asks for JSON as the appliance, with the headers an adapter adds', async () => {
    await withSession(async ({ dispatcher }) => {
      seen.length = 0;
      await getText(`${base}/json`, { dispatcher, timeoutMs: LONG, headers: { authorization: 'token t' } });
      expect(seen[0]).toMatchObject({
        accept: 'application/json',
        'user-agent': 'advisory-appliance',
        authorization: 'token t',
      });
    });
  });

  it(`reads an answer of up to ${MAX_ANSWER_BYTES} bytes, and not a byte more`, async () => {
    await withSession(async ({ dispatcher }) => {
      const options = { dispatcher, timeoutMs: LONG };
      expect(await getText(`${base}/bytes/${MAX_ANSWER_BYTES}`, options)).toHaveLength(MAX_ANSWER_BYTES);
      const error = await failure(getText(`${base}/bytes/${MAX_ANSWER_BYTES + 1}`, options));
      expect(error.message).toBe(
        `${base}/bytes/${MAX_ANSWER_BYTES + 1}: answer larger than ${MAX_ANSWER_BYTES} bytes`,
      );
    });
  });

  it('says what went wrong: not JSON, an answer cut short, no connection, no answer in time', async () => {
    await withSession(async ({ dispatcher }) => {
      const options = { dispatcher, timeoutMs: LONG };
      expect((await failure(getJson(`${base}/text`, options))).message).toBe(
        `${base}/text: the answer is not JSON`,
      );
      expect((await failure(getJson(`${base}/cut`, options))).message).toMatch(
        new RegExp(`^${base}/cut: \\w`),
      );
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      expect((await failure(getText(`http://127.0.0.1:${port}/x`, options))).message).toBe(
        `http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`,
      );
      expect((await failure(getText(`${base}/hold`, { dispatcher, timeoutMs: 300 }))).message).toBe(
        `${base}: timed out after 300 ms`,
      );
    });
  });
});

describe('a session', () => {
  it('stops its open requests when it ends, and starts none after', async () => {
    const session = adapterSession({}, LONG);
    const options = { dispatcher: session.dispatcher, timeoutMs: LONG, signal: session.signal };
    const before = held.size;
    const open = failure(getText(`${base}/hold`, options));
    await expect.poll(() => held.size).toBe(before + 1);
    await session.end();
    expect((await open).message).toBe(`${base}: ${STOPPED}`);
    expect((await failure(getText(`${base}/json`, options))).message).toBe(`${base}: ${STOPPED}`);
    expect(session.signal.aborted).toBe(true);
  });

  it("stops when the source's deadline passes, or at once when it passed already", async () => {
    const deadline = new AbortController();
    const session = adapterSession({}, LONG, deadline.signal);
    const options = { dispatcher: session.dispatcher, timeoutMs: LONG, signal: session.signal };
    const before = held.size;
    const open = failure(getText(`${base}/hold`, options));
    await expect.poll(() => held.size).toBe(before + 1);
    deadline.abort(new Error('deadline'));
    expect((await open).message).toBe(`${base}: ${STOPPED}`);
    // Its connections are closed with it: nothing goes out through them any more.
    await expect(
      getText(`${base}/json`, { dispatcher: session.dispatcher, timeoutMs: LONG }),
    ).rejects.toThrow(AdapterError);
    await session.end();

    const late = adapterSession({}, LONG, AbortSignal.abort());
    expect(late.signal.aborted).toBe(true);
    // The dispatcher is destroyed at once: not even a request without the signal goes out.
    await expect(getText(`${base}/json`, { dispatcher: late.dispatcher, timeoutMs: LONG })).rejects.toThrow(
      AdapterError,
    );
    await late.end();
  });
});

describe('TLS trust', () => {
  it('pins exactly one certificate by its fingerprint, in either case', async () => {
    const counts = { connections: 0, open: 0 };
    const host = await listenTls('pinned.lan', counts, (_, response) => response.end('{"ok":true}'));
    try {
      for (const fingerprint of [host.fingerprint, host.fingerprint.toLowerCase()])
        await withSession(
          async ({ dispatcher }) =>
            expect(await getJson(`${host.url}/`, { dispatcher, timeoutMs: LONG })).toEqual({ ok: true }),
          { fingerprint },
        );
      const other = `${'ab:'.repeat(31)}ab`;
      await withSession(
        async ({ dispatcher }) =>
          expect((await failure(getJson(`${host.url}/`, { dispatcher, timeoutMs: LONG }))).message).toBe(
            `${host.url}: certificate fingerprint ${host.fingerprint} is not the pinned ${other.toUpperCase()}`,
          ),
        { fingerprint: other },
      );
      // By its CA file, and not at all without one.
      await withSession(
        async ({ dispatcher }) =>
          expect(await getJson(`${host.url}/`, { dispatcher, timeoutMs: LONG })).toEqual({ ok: true }),
        { ca: host.cert },
      );
      await withSession(async ({ dispatcher }) =>
        expect((await failure(getJson(`${host.url}/`, { dispatcher, timeoutMs: LONG }))).message).toMatch(
          /self.signed/,
        ),
      );
    } finally {
      await host.close();
    }
  });

  it('names the host it asks (SNI) when pinning, so a server of several names shows the right certificate', async () => {
    const [named, fallback] = await Promise.all([makePair('localhost'), makePair('default.lan')]);
    const host = createHttpsServer(
      {
        key: fallback.key,
        cert: fallback.cert,
        SNICallback: (name, done) =>
          done(
            null,
            name === 'localhost' ? createSecureContext({ key: named.key, cert: named.cert }) : undefined,
          ),
      },
      (_, response) => response.end('{"ok":true}'),
    );
    await new Promise<void>((resolve) => host.listen(0, 'localhost', resolve));
    const url = `https://localhost:${(host.address() as AddressInfo).port}/`;
    try {
      // Pinned, and (undici's own connector) trusted by its CA file.
      for (const trust of [{ fingerprint: named.fingerprint }, { ca: named.cert }])
        await withSession(
          async ({ dispatcher }) =>
            expect(await getJson(url, { dispatcher, timeoutMs: LONG })).toEqual({ ok: true }),
          trust,
        );
    } finally {
      host.closeAllConnections();
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
  });

  it('keeps one pinned connection for a run of requests', async () => {
    const counts = { connections: 0, open: 0 };
    const host = await listenTls('pinned.lan', counts, (_, response) => response.end('{"ok":true}'));
    try {
      await withSession(
        async ({ dispatcher }) => {
          for (let i = 0; i < 5; i += 1) await getJson(`${host.url}/`, { dispatcher, timeoutMs: LONG });
        },
        { fingerprint: host.fingerprint },
      );
      expect(counts.connections).toBe(1);
    } finally {
      await host.close();
    }
  });
});

describe('apiGetter', () => {
  it('says what to fix for a refused credential, in a message naming the source', async () => {
    await withSession(async (session) => {
      const get = apiGetter(session, {
        source: 'pve',
        timeoutMs: LONG,
        headers: {},
        refused: { 401: 'check token_id and token_secret_file' },
      });
      const refused = await failure(get(`${base}/status/401`));
      expect(refused.message).toBe(
        `pve: ${base}/status/401 answered HTTP 401: check token_id and token_secret_file`,
      );
      expect(refused.status).toBe(401);
      // Any other failure as it is.
      expect((await failure(get(`${base}/status/403`))).message).toBe(`${base}/status/403 answered HTTP 403`);
      expect((await failure(get(`${base}/text`))).message).toBe(`${base}/text: the answer is not JSON`);
      expect(await get(`${base}/json`)).toEqual({ version: '1.2.3' });
    });
  });
});
