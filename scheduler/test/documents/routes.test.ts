import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createS3Storage } from '../../src/storage/object-storage.ts';
import { type Caller, createTestContext, FORBIDDEN_BODY, type TestContext } from '../support/context.ts';
import { raceAgainst } from '../support/held-racer.ts';
import { type S3Server, startS3Server } from '../support/s3-server.ts';
import { newEvent } from '../support/scheduling.ts';

/**
 * Event documents through presigned URLs, against a local S3-compatible server that
 * checks signatures and expiry: what the API signs is exactly what storage accepts.
 */
let s3: S3Server;
let ctx: TestContext;
let bare: TestContext;
let admin: Caller;
let employee: Caller;
/** The app's clock: real time unless a test moves it (the storage server uses real time). */
let skewMs = 0;

beforeAll(async () => {
  s3 = await startS3Server();
  ctx = await createTestContext({
    clock: { now: () => new Date(Date.now() + skewMs) },
    documents: { store: createS3Storage(s3.config), urlTtlSeconds: 900, maxBytes: 1024 * 1024 },
  });
  bare = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
  await bare?.close();
  await s3?.close();
});
beforeEach(async () => {
  skewMs = 0;
  ({ admin, employee } = await ctx.freshTenant());
});

const pdf = Buffer.from('%PDF-1.7\n% a site plan\n');
const asked = { filename: 'Site plan (v2).pdf', content_type: 'application/pdf', size_bytes: pdf.length };

async function upload(eventId: string, body: Record<string, unknown> = asked) {
  const response = await admin.request('POST', `/api/v1/events/${eventId}/documents/upload`, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as {
    document_id: string;
    upload_url: string;
    method: 'PUT';
    headers: Record<string, string>;
    object_key: string;
    expires_at: string;
  };
}

const put = (url: string, headers: Record<string, string>, body: Buffer) =>
  fetch(url, { method: 'PUT', headers, body });

describe('event documents', () => {
  it('answers a presigned PUT that stores the file, and lists it with a working download URL', async () => {
    const event = await newEvent(admin);
    const before = Date.now();
    const answer = await upload(event);
    expect(answer).toEqual({
      document_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      upload_url: expect.stringContaining(`/event-documents/tenants/${admin.tenantId}/events/${event}/`),
      method: 'PUT',
      headers: { 'content-type': 'application/pdf', 'content-length': String(pdf.length) },
      object_key: `tenants/${admin.tenantId}/events/${event}/${answer.document_id}/Site_plan__v2_.pdf`,
      expires_at: expect.any(String),
    });
    // Fifteen minutes from the moment the request was answered, whatever it took.
    const expires = Date.parse(answer.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 900_000 - 1_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 900_000 + 1_000);
    const signed = new URL(answer.upload_url).searchParams.get('X-Amz-SignedHeaders');
    expect(signed?.split(';')).toEqual(expect.arrayContaining(['content-length', 'content-type', 'host']));

    const stored = await put(answer.upload_url, answer.headers, pdf);
    expect(stored.status).toBe(200);

    for (const caller of [admin, employee]) {
      const list = await caller.request('GET', `/api/v1/events/${event}/documents`);
      expect(list.statusCode).toBe(200);
      const [document] = list.json();
      expect(document).toEqual({
        id: answer.document_id,
        tenant_id: admin.tenantId,
        event_id: event,
        filename: 'Site plan (v2).pdf',
        content_type: 'application/pdf',
        size_bytes: pdf.length,
        object_key: answer.object_key,
        download_url: expect.any(String),
        download_expires_at: expect.any(String),
        created_at: expect.any(String),
      });
      const download = await fetch(document.download_url);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer())).toEqual(pdf);
      expect(download.headers.get('content-disposition')).toBe('attachment; filename="Site plan _v2_.pdf"');
      // Downloads are signed for the same fifteen minutes.
      const downloadExpires = Date.parse(document.download_expires_at);
      expect(downloadExpires).toBeGreaterThanOrEqual(before + 900_000 - 1_000);
      expect(downloadExpires).toBeLessThanOrEqual(Date.now() + 900_000 + 1_000);
    }
  });

  it('keys a file by a safe name: leading dots and unsafe characters become _, the record keeps the name', async () => {
    const event = await newEvent(admin);
    const answer = await upload(event, { ...asked, filename: '..hidden plan.pdf' });
    expect(answer.object_key).toBe(
      `tenants/${admin.tenantId}/events/${event}/${answer.document_id}/_hidden_plan.pdf`,
    );
    const [document] = (await admin.request('GET', `/api/v1/events/${event}/documents`)).json();
    expect(document.filename).toBe('..hidden plan.pdf');
  });

  it('takes a file of exactly the size limit', async () => {
    const event = await newEvent(admin);
    const answer = await upload(event, { ...asked, size_bytes: 1024 * 1024 });
    expect(answer.headers['content-length']).toBe(String(1024 * 1024));
  });

  it('answers 404 when the event is deleted while the upload is requested, and records nothing', async () => {
    const event = await newEvent(admin);
    const answer = await raceAgainst(
      ctx.db.owner,
      (trx) => trx.deleteFrom('events').where('id', '=', event).execute(),
      () => admin.request('POST', `/api/v1/events/${event}/documents/upload`, asked),
    );
    expect(answer.json(), answer.body).toEqual({ error: { code: 'NOT_FOUND', message: 'event not found' } });
    const rows = await ctx.db.owner
      .selectFrom('event_documents')
      .select('id')
      .where('event_id', '=', event)
      .execute();
    expect(rows).toEqual([]);
  });

  it('refuses a tampered URL, another key, another content type, another size and an expired URL', async () => {
    const event = await newEvent(admin);
    const answer = await upload(event);
    const url = new URL(answer.upload_url);
    const signature = url.searchParams.get('X-Amz-Signature') ?? '';
    const tampered = new URL(url);
    tampered.searchParams.set(
      'X-Amz-Signature',
      `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`,
    );
    expect((await put(tampered.toString(), answer.headers, pdf)).status).toBe(403);
    const elsewhere = new URL(url);
    elsewhere.pathname = elsewhere.pathname.replace(answer.document_id, '0'.repeat(32));
    expect((await put(elsewhere.toString(), answer.headers, pdf)).status).toBe(403);
    const html = { ...answer.headers, 'content-type': 'text/html' };
    expect((await put(answer.upload_url, html, pdf)).status).toBe(403);
    const bigger = Buffer.concat([pdf, Buffer.from('<script>')]);
    expect((await put(answer.upload_url, { 'content-type': 'application/pdf' }, bigger)).status).toBe(403);

    // Signed sixteen minutes ago with fifteen minutes of validity: expired.
    skewMs = -16 * 60 * 1000;
    const stale = await upload(event);
    expect((await put(stale.upload_url, stale.headers, pdf)).status).toBe(403);

    // None of those stored anything: the first URL still writes the file as asked.
    skewMs = 0;
    const [listed] = (await admin.request('GET', `/api/v1/events/${event}/documents`)).json();
    expect((await fetch(listed.download_url)).status).toBe(404);
    expect((await put(answer.upload_url, answer.headers, pdf)).status).toBe(200);
    expect((await fetch(listed.download_url)).status).toBe(200);
  });

  it.each([
    [{ ...asked, size_bytes: 1024 * 1024 + 1 }, 'size_bytes: must be at most 1048576 bytes'],
    [{ ...asked, size_bytes: 0 }, 'size_bytes'],
    [{ ...asked, filename: '../etc/passwd' }, 'filename'],
    [{ ...asked, filename: '' }, 'filename'],
    [{ ...asked, content_type: 'pdf' }, 'content_type'],
    [{ ...asked, content_type: 'text/html' }, 'content_type: must be one of application/pdf, image/png'],
    [{ ...asked, content_type: 'image/svg+xml' }, 'content_type: must be one of'],
    [{ ...asked, content_type: 'application/xhtml+xml' }, 'content_type: must be one of'],
    [{ ...asked, content_type: 'text/javascript' }, 'content_type: must be one of'],
    [{ ...asked, content_type: 'Application/PDF' }, 'content_type: must be one of'],
    [{ filename: 'a.pdf', content_type: 'application/pdf' }, 'size_bytes'],
  ])('refuses %j with 422 and records nothing', async (body, message) => {
    const event = await newEvent(admin);
    const response = await admin.request('POST', `/api/v1/events/${event}/documents/upload`, body);
    expect(response.statusCode).toBe(422);
    expect(response.json().error.message).toContain(message);
    expect((await admin.request('GET', `/api/v1/events/${event}/documents`)).json()).toEqual([]);
  });

  it('lets only admins upload, and employees see documents of published events only', async () => {
    const published = await newEvent(admin);
    const draft = await newEvent(admin, { publish: false });
    const refused = await employee.request('POST', `/api/v1/events/${published}/documents/upload`, asked);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual(FORBIDDEN_BODY);
    await upload(draft);
    expect((await employee.request('GET', `/api/v1/events/${draft}/documents`)).statusCode).toBe(404);
    expect((await admin.request('GET', `/api/v1/events/${draft}/documents`)).json()).toHaveLength(1);
    const other = (await ctx.freshTenant()).admin;
    expect(
      (await other.request('POST', `/api/v1/events/${published}/documents/upload`, asked)).statusCode,
    ).toBe(404);
  });

  it('answers 503 with what to set while no storage is configured', async () => {
    const { admin: someone } = await bare.freshTenant();
    const event = await newEvent(someone);
    for (const [method, url, body] of [
      ['POST', `/api/v1/events/${event}/documents/upload`, asked],
      ['GET', `/api/v1/events/${event}/documents`, undefined],
    ] as const) {
      const response = await someone.request(method, url, body);
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message:
          'document storage is not configured: set S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT for a store other than AWS)',
      });
    }
    expect(
      (await someone.request('GET', '/api/v1/events/0123456789abcdef0123456789abcdef/documents')).statusCode,
    ).toBe(404);
  });
});
