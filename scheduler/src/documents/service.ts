import type { Identity } from '../auth/identity.ts';
import { unitOfWork } from '../changes/unit-of-work.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Deps, DocumentStorage } from '../deps.ts';
import { AppError, notFound, validationFailed } from '../errors.ts';
import { getEvent } from '../events/service.ts';
import { newId } from '../ids.ts';
import { insertDocument, listDocuments } from './repository.ts';
import type { EventDocument, RequestUploadRequest, UploadUrlResponse } from './schemas.ts';

/** The 503 message while no object storage is configured (also the OpenAPI example). */
export const STORAGE_UNCONFIGURED =
  'document storage is not configured: set S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT for a store other than AWS)';

function configured(deps: Deps): DocumentStorage {
  if (!deps.documents) throw new AppError('SERVICE_UNAVAILABLE', STORAGE_UNCONFIGURED);
  return deps.documents;
}

/** The file name as a key segment: safe characters only (the real name stays in the record). */
const keySegment = (filename: string) => filename.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');

/**
 * Records a document of the event and answers a presigned PUT for it, bound to the
 * declared content type and size and valid for the configured time. The key lives under
 * the tenant and the event, so no URL can write anywhere else.
 */
export async function requestUpload(
  deps: Deps,
  caller: Identity,
  eventId: string,
  input: RequestUploadRequest,
): Promise<UploadUrlResponse> {
  await getEvent(deps, caller, eventId);
  const storage = configured(deps);
  if (input.size_bytes > storage.maxBytes) {
    throw validationFailed('size_bytes', `must be at most ${storage.maxBytes} bytes`);
  }
  const id = newId();
  const objectKey = `tenants/${caller.tenantId}/events/${eventId}/${id}/${keySegment(input.filename)}`;
  const now = deps.clock.now();
  const put = await storage.store.presignPut(
    objectKey,
    input.content_type,
    input.size_bytes,
    now,
    storage.urlTtlSeconds,
  );
  try {
    await unitOfWork(deps, caller, 'document.added', async (tx) => {
      await insertDocument(tx.db, {
        tenant_id: caller.tenantId,
        id,
        event_id: eventId,
        object_key: objectKey,
        filename: input.filename,
        content_type: input.content_type,
        size_bytes: input.size_bytes,
        requested_by: caller.userId,
      });
      await tx.record({ type: 'document.added', eventId, documentId: id });
    });
  } catch (error) {
    // The event was deleted meanwhile.
    if (isForeignKeyViolation(error, 'event_documents_tenant_id_event_id_fkey')) throw notFound('event');
    throw error;
  }
  return {
    document_id: id,
    upload_url: put.url,
    method: 'PUT',
    headers: put.headers,
    object_key: objectKey,
    expires_at: new Date(now.getTime() + storage.urlTtlSeconds * 1000).toISOString(),
  };
}

/** The event's documents, each with a presigned download URL; visible where the event is. */
export async function getDocuments(deps: Deps, caller: Identity, eventId: string): Promise<EventDocument[]> {
  await getEvent(deps, caller, eventId);
  const storage = configured(deps);
  const now = deps.clock.now();
  const expires = new Date(now.getTime() + storage.urlTtlSeconds * 1000).toISOString();
  const rows = await listDocuments(deps.db, caller.tenantId, eventId);
  return Promise.all(
    rows.map(async (row) => ({
      ...row,
      download_url: await storage.store.presignGet(row.object_key, row.filename, now, storage.urlTtlSeconds),
      download_expires_at: expires,
    })),
  );
}
