import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../src/http/error-handler.ts';
import { createLogger, redactUrl } from '../src/logger.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}

describe('process logger', () => {
  it('writes JSON lines for log collectors when no person watches', () => {
    const { lines, destination } = capture();
    createLogger('info', { interactive: false, destination }).info({ port: 8080 }, 'scheduler ready');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 30, msg: 'scheduler ready', port: 8080 });
  });

  it('writes readable lines on a terminal, and still redacts tokens', () => {
    const { lines, destination } = capture();
    createLogger('info', { interactive: true, destination }).info(
      { req: { headers: { authorization: 'Bearer secret-token' } } },
      'scheduler ready',
    );
    const text = lines.join('\n');
    expect(text).toMatch(/INFO.*scheduler ready/);
    expect(() => JSON.parse(lines[0] ?? '')).toThrow();
    expect(text).not.toContain('secret-token');
  });

  it('respects the level', () => {
    const { lines, destination } = capture();
    const log = createLogger('warn', { interactive: false, destination });
    log.info('quiet');
    log.warn('loud');
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['loud']);
  });
});

describe('secrets in log lines', () => {
  async function served(url: string, headers: Record<string, string> = {}) {
    const { lines, destination } = capture();
    const app = Fastify({
      loggerInstance: createLogger('info', { interactive: false, destination }) as FastifyBaseLogger,
    });
    // The scheduler's own answers to errors and unknown routes, as in the served API.
    registerErrorHandling(app);
    app.get('/cal/:file', async () => 'BEGIN:VCALENDAR');
    app.get('/api/v1/roles', async () => []);
    app.get('/boom', async () => {
      throw Object.assign(new Error('insert failed'), {
        params: ['p256dh-secret', 'auth-secret'],
        query: 'INSERT INTO push_subscriptions VALUES ($1, $2)',
        detail: 'Failing row contains (auth-secret)',
        code: '23514',
      });
    });
    await app.inject({ method: 'GET', url, headers });
    await app.close();
    return lines.join('\n');
  }

  it('writes a calendar feed address without its secret token', async () => {
    const text = await served('/cal/Zm9vYmFyYmF6cXV4cXV1eHNlY3JldHRva2VuMTIzNDU2.ics');
    expect(text).not.toContain('Zm9vYmFyYmF6cXV4cXV1eHNlY3JldHRva2VuMTIzNDU2');
    expect(text).toContain('"url":"/cal/[redacted].ics"');
  });

  it.each([
    ['a trailing slash', '/cal/c2VjcmV0dG9rZW5zZWNyZXR0b2tlbjEyMzQ1Ng.ics/'],
    ['an encoded path', '/%63al/c2VjcmV0dG9rZW5zZWNyZXR0b2tlbjEyMzQ1Ng.ics'],
    ['an encoded dot', '/cal/c2VjcmV0dG9rZW5zZWNyZXR0b2tlbjEyMzQ1Ng%2Eics'],
    ['a doubled slash', '//cal/c2VjcmV0dG9rZW5zZWNyZXR0b2tlbjEyMzQ1Ng.ics'],
    ['a deeper path', '/cal/c2VjcmV0dG9rZW5zZWNyZXR0b2tlbjEyMzQ1Ng/x.ics'],
  ])('writes a calendar address spelled with %s without its token', async (_how, url) => {
    const text = await served(url);
    expect(text).not.toContain('c2VjcmV0dG9rZW5zZWNyZXR0b2tlbjEyMzQ1Ng');
    expect(text).toContain('/cal/[redacted]');
  });

  it('redacts a calendar address whose escapes are broken (the router refuses it before logging)', () => {
    expect(redactUrl('/cal/c2VjcmV0%zz.ics?x=1')).toBe('/cal/[redacted].ics?x=1');
    expect(redactUrl('/api/v1/calendar')).toBe('/api/v1/calendar');
  });

  it('writes query strings without the values of secret-looking parameters', async () => {
    const text = await served('/api/v1/roles?status=open&access_token=t0ken&X-Amz-Signature=s1g&api_key=k3y');
    for (const secret of ['t0ken', 's1g', 'k3y']) expect(text).not.toContain(secret);
    expect(text).toContain('status=open');
  });

  it('writes no request header that carries a credential, whatever the line', async () => {
    const { lines, destination } = capture();
    createLogger('info', { interactive: false, destination }).info(
      {
        req: { headers: { authorization: 'Bearer a-token', cookie: 'sid=a-cookie' } },
        headers: { authorization: 'Basic a-password', 'x-api-key': 'a-key' },
      },
      'something',
    );
    const text = lines.join('\n');
    for (const secret of ['a-token', 'a-cookie', 'a-password', 'a-key']) expect(text).not.toContain(secret);
  });

  it('writes an error without the statement’s parameters, its text or the failing row', async () => {
    const text = await served('/boom');
    expect(text).toContain('insert failed');
    expect(text).toContain('23514');
    for (const secret of ['p256dh-secret', 'auth-secret', 'INSERT INTO']) expect(text).not.toContain(secret);
  });
});
