import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findUnstorableString } from '../../src/http/json-parser.ts';
import { type Caller, createTestContext, type TestContext } from '../support/context.ts';

/**
 * Request bodies (src/http/json-parser.ts): JSON only, parsed strictly, valid UTF-8,
 * strings PostgreSQL can store, within the body limit; what is refused stores nothing.
 */
describe('request bodies', () => {
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
});

describe('findUnstorableString', () => {
  it('finds nothing in storable values', () => {
    for (const value of [null, 1, true, 'text', ['a', 'b'], { a: { b: ['c'] } }, {}, [], 'emoji \u{1F600}']) {
      expect(findUnstorableString(value)).toBeNull();
    }
  });

  it('names the path of the first NUL or lone surrogate', () => {
    expect(findUnstorableString('a\u0000')).toBe('body');
    expect(findUnstorableString(['ok', 'b\ud800'])).toBe('[1]');
    expect(findUnstorableString({ name: 'x\udc00' })).toBe('name');
    expect(findUnstorableString({ slots: [{ role: 'ok' }, { role: 'ok', note: 'n\u0000' }] })).toBe(
      'slots[1].note',
    );
    expect(findUnstorableString({ a: 'ok', b: ['\u0000'], c: '\u0000' })).toBe('b[0]');
    expect(findUnstorableString([['ok', ['\ud83d']]])).toBe('[0][1][0]');
  });

  it('names the object that holds a key it cannot store', () => {
    expect(findUnstorableString({ 'na\u0000me': 'x' })).toBe('body');
    expect(findUnstorableString({ outer: { '\ud800': 1 } })).toBe('outer');
    expect(findUnstorableString([{ ok: 1 }, { 'k\u0000': 1 }])).toBe('[1]');
  });
});
