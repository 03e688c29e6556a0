import { Type } from 'typebox';
import type { Deps } from '../deps.ts';
import { bearerSecurity, bodyCodes, errorResponses, IdParams, ok, pathIdCodes } from '../http/schemas.ts';
import { type App, identityOf } from '../http/types.ts';
import { pathId } from '../ids.ts';
import {
  EventDocument,
  exampleDocument,
  exampleUpload,
  RequestUploadRequest,
  UploadUrlResponse,
} from './schemas.ts';
import { getDocuments, requestUpload, STORAGE_UNCONFIGURED } from './service.ts';

export async function documentsRoutes(app: App, deps: Deps): Promise<void> {
  app.post(
    '/api/v1/events/:id/documents/upload',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['events'],
        operationId: 'requestEventDocumentUpload',
        summary: 'A presigned URL to upload a document of the event',
        description:
          'Admins only. Records the document and answers a presigned S3 PUT URL for a key under the tenant and event, bound to the declared content type and size (send exactly the headers given) and valid for UPLOAD_URL_TTL_SECONDS (15 minutes by default). 503 while object storage is not configured.',
        security: bearerSecurity,
        params: IdParams,
        body: RequestUploadRequest,
        response: {
          201: ok(UploadUrlResponse, 'Where and how to upload', exampleUpload),
          ...errorResponses([...pathIdCodes, ...bodyCodes], {
            messages: { NOT_FOUND: 'event not found', SERVICE_UNAVAILABLE: STORAGE_UNCONFIGURED },
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await requestUpload(deps, identityOf(request), pathId(request.params.id, 'event'), request.body),
        ),
  );

  app.get(
    '/api/v1/events/:id/documents',
    {
      config: { access: 'member' },
      schema: {
        tags: ['events'],
        operationId: 'listEventDocuments',
        summary: 'The documents of an event, each with a download URL',
        description:
          'Admins, and employees for events they may see. Each document has a presigned GET URL valid for UPLOAD_URL_TTL_SECONDS. 503 while object storage is not configured.',
        security: bearerSecurity,
        params: IdParams,
        response: {
          200: ok(Type.Array(EventDocument), 'The documents, oldest first', [exampleDocument]),
          ...errorResponses(pathIdCodes, {
            messages: { NOT_FOUND: 'event not found', SERVICE_UNAVAILABLE: STORAGE_UNCONFIGURED },
          }),
        },
      },
    },
    async (request) => getDocuments(deps, identityOf(request), pathId(request.params.id, 'event')),
  );
}
