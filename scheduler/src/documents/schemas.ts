import { type Static, Type } from 'typebox';
import { examples, ReadOnlyId, ReadOnlyTimestamp } from '../http/schemas.ts';
import { fileNamePattern } from '../input/text.ts';

/**
 * The content types an upload may declare: documents people open with an application,
 * nothing a browser renders as a page or runs (HTML, SVG, XML, JavaScript are refused,
 * since the bucket serves the bytes back under the declared type). Downloads are
 * attachments in any case (storage/object-storage.ts).
 */
export const documentContentTypes = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/heic',
  'text/plain',
  'text/csv',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/zip',
] as const;

/** What an admin asks to upload: the presigned PUT is bound to this type and size. */
export const RequestUploadRequest = Type.Object(
  {
    filename: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: fileNamePattern,
      description: 'A file name, no path: one line, without / or \\',
    }),
    content_type: Type.Enum(documentContentTypes, {
      type: 'string',
      description:
        'One of the document types the API stores (docs/scheduler/decisions.md, Event documents): PDF, raster images, plain text and CSV, office documents, zip. No HTML, SVG or scripts: a stored file is served back from the bucket, where such types would run in the browser.',
    }),
    size_bytes: Type.Integer({
      minimum: 1,
      maximum: 5 * 1024 ** 3,
      description: 'Exact size of the file; at most UPLOAD_MAX_BYTES (100 MiB by default)',
    }),
  },
  {
    title: 'RequestUploadRequest',
    additionalProperties: false,
    examples: [{ filename: 'site-plan.pdf', content_type: 'application/pdf', size_bytes: 482133 }],
  },
);
export type RequestUploadRequest = Static<typeof RequestUploadRequest>;

/** A presigned upload: PUT the file's bytes to upload_url with exactly these headers. */
export const UploadUrlResponse = Type.Object(
  {
    document_id: ReadOnlyId,
    upload_url: Type.String({ format: 'uri', description: 'Presigned URL; PUT the file there' }),
    method: Type.Literal('PUT'),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Headers the PUT must carry' }),
    object_key: Type.String({ description: 'Where the file will be stored' }),
    expires_at: Type.String({ format: 'date-time', description: 'The URL stops working then' }),
  },
  { title: 'UploadUrlResponse' },
);
export type UploadUrlResponse = Static<typeof UploadUrlResponse>;

export const exampleUpload: UploadUrlResponse = {
  document_id: '0193a1b2c3d47e8f9a0b1c2d3e4f5ac0',
  upload_url: 'https://storage.example.com/events/site-plan.pdf?X-Amz-Signature=abc',
  method: 'PUT',
  headers: { 'content-type': 'application/pdf', 'content-length': '482133' },
  object_key:
    'tenants/0190f3a2c5a87c3e9b1d2f4a6c8e0b13/events/0193a1b2c3d47e8f9a0b1c2d3e4f5a70/0193a1b2c3d47e8f9a0b1c2d3e4f5ac0/site-plan.pdf',
  expires_at: '2026-11-02T09:45:00.000Z',
};

export const EventDocument = Type.Object(
  {
    id: ReadOnlyId,
    tenant_id: ReadOnlyId,
    event_id: ReadOnlyId,
    filename: Type.String(),
    content_type: Type.String(),
    size_bytes: Type.Integer({ format: 'int64' }),
    object_key: Type.String(),
    download_url: Type.String({
      format: 'uri',
      description: 'Presigned GET URL, valid until download_expires_at',
    }),
    download_expires_at: Type.String({ format: 'date-time' }),
    created_at: ReadOnlyTimestamp,
  },
  {
    title: 'EventDocument',
    description: 'A document of an event, as requested; its URL answers 404 if the upload never happened',
  },
);
export type EventDocument = Static<typeof EventDocument>;

export const exampleDocument: EventDocument = {
  id: exampleUpload.document_id,
  tenant_id: examples.tenantId,
  event_id: examples.eventId,
  filename: 'site-plan.pdf',
  content_type: 'application/pdf',
  size_bytes: 482133,
  object_key: exampleUpload.object_key,
  download_url: 'https://storage.example.com/events/site-plan.pdf?X-Amz-Signature=def',
  download_expires_at: '2026-11-02T09:45:00.000Z',
  created_at: examples.createdAt,
};
