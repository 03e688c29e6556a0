import { type Static, Type } from 'typebox';

/** What an admin asks to upload; the URL itself comes with object storage (a later release). */
export const RequestUploadRequest = Type.Object(
  {
    filename: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^/\\\\\\u0000]+$',
      description: 'A file name, no path',
    }),
    content_type: Type.String({
      minLength: 3,
      maxLength: 255,
      pattern: '^[a-zA-Z0-9!#$&^_.+-]+/[a-zA-Z0-9!#$&^_.+-]+$',
      description: 'A MIME type such as application/pdf',
    }),
    size_bytes: Type.Integer({ minimum: 1, maximum: 100 * 1024 * 1024, description: 'At most 100 MiB' }),
  },
  {
    title: 'RequestUploadRequest',
    additionalProperties: false,
    examples: [{ filename: 'site-plan.pdf', content_type: 'application/pdf', size_bytes: 482133 }],
  },
);
export type RequestUploadRequest = Static<typeof RequestUploadRequest>;

/** The presigned upload the route will answer once object storage is configured. */
export const UploadUrlResponse = Type.Object(
  {
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
  upload_url: 'https://storage.example.com/events/site-plan.pdf?X-Amz-Signature=abc',
  method: 'PUT',
  headers: { 'content-type': 'application/pdf' },
  object_key:
    'tenants/0190f3a2c5a87c3e9b1d2f4a6c8e0b13/events/0193a1b2c3d47e8f9a0b1c2d3e4f5a70/site-plan.pdf',
  expires_at: '2026-11-02T09:45:00.000Z',
};
