import type { Db } from '../db/database.ts';

export interface DocumentValues {
  tenant_id: string;
  id: string;
  event_id: string;
  object_key: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  requested_by: string;
}

const columns = [
  'id',
  'tenant_id',
  'event_id',
  'filename',
  'content_type',
  'size_bytes',
  'object_key',
  'created_at',
] as const;

export async function insertDocument(db: Db, values: DocumentValues): Promise<void> {
  await db.insertInto('event_documents').values(values).execute();
}

/** Oldest first. */
export function listDocuments(db: Db, tenantId: string, eventId: string) {
  return db
    .selectFrom('event_documents')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .where('event_id', '=', eventId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
