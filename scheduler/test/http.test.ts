import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorCatalogue } from '../src/errors.ts';
import { type Caller, createTestContext, type TestContext } from './support/context.ts';

let ctx: TestContext;
let admin: Caller;

beforeAll(async () => {
  ctx = await createTestContext({ bodyLimitBytes: 4096 });
});
// A tenant of its own per test: "stores nothing" means an empty list, whatever ran before.
beforeEach(async () => {
  admin = (await ctx.freshTenant()).admin;
});
afterAll(async () => ctx?.close());

describe('wire conventions', () => {
  it('answers unknown routes with the error shape', async () => {
    for (const [method, url] of [
      ['GET', '/nope'],
      ['GET', '/api/v1/nope'],
      ['PUT', '/api/v1/roles'],
    ] as const) {
      const response = await ctx.request(method, url);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        error: { code: 'NOT_FOUND', message: expect.stringContaining('no route for') },
      });
    }
  });

  it('answers 413 above the body limit, and stores nothing', async () => {
    const response = await admin.request('POST', '/api/v1/roles', {
      name: 'big',
      description: 'x'.repeat(5000),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      error: { code: 'PAYLOAD_TOO_LARGE', message: 'request body too large' },
    });
    expect((await admin.request('GET', '/api/v1/roles')).json()).toEqual([]);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const response = await ctx.request('POST', '/api/v1/roles', {
      token: admin.token,
      headers: { 'content-type': 'text/plain' },
      rawBody: 'name=x',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 for malformed JSON and refuses prototype poisoning', async () => {
    for (const rawBody of ['{"name":', '{"name":"x","__proto__":{"admin":true}}']) {
      const response = await ctx.request('POST', '/api/v1/roles', { token: admin.token, rawBody });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ error: { code: 'BAD_REQUEST', message: 'malformed JSON body' } });
    }
  });

  it('answers 400 for a body that is not valid UTF-8, and stores nothing', async () => {
    for (const bytes of [
      [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d], // {"name":"\xff\xfe"}
      [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d], // a truncated sequence
      [0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d], // an encoded surrogate
    ]) {
      const response = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/roles',
        headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' },
        payload: Buffer.from(bytes),
      });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        error: { code: 'BAD_REQUEST', message: 'request body is not valid UTF-8' },
      });
    }
    expect((await admin.request('GET', '/api/v1/roles')).json()).toEqual([]);
  });

  it('treats an empty JSON body as no body (422 naming what is missing)', async () => {
    const response = await ctx.request('POST', '/api/v1/roles', { token: admin.token, rawBody: '' });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('treats a JSON body of white space as no body too', async () => {
    const response = await ctx.request('POST', '/api/v1/roles', { token: admin.token, rawBody: ' \r\n\t ' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'body: must be object' },
    });
  });

  it('refuses a field name with a NUL character, naming the body', async () => {
    const response = await ctx.request('POST', '/api/v1/roles', {
      token: admin.token,
      rawBody: '{"name":"ok","na\\u0000me":"x"}',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: 'body: must not contain NUL characters or invalid Unicode',
      },
    });
    expect((await admin.request('GET', '/api/v1/roles')).json()).toEqual([]);
  });

  it('sends a request id header on every response', async () => {
    const response = await ctx.request('GET', '/health');
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('health', () => {
  it('answers 200 without authentication while the database answers', async () => {
    const response = await ctx.request('GET', '/health');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: 'ok' });
  });
});

describe('error catalogue', () => {
  it('documents every error code in docs/scheduler/errors.md', () => {
    const doc = readFileSync(new URL('../../docs/scheduler/errors.md', import.meta.url), 'utf8');
    for (const [code, { status }] of Object.entries(errorCatalogue)) {
      expect(doc, code).toMatch(new RegExp(`\\| *\`${code}\` *\\| *${status} *\\|`));
    }
  });
});
