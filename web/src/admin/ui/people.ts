import type { Schemas } from '../../api/client.ts';

/** A person's name as people read it: the display name, else the email, else the id. */
export function personName(user: Schemas['UserRecord'] | undefined, id: string): string {
  return user?.display_name ?? user?.email ?? id;
}

/** Records by id, for naming what the API names by id only. */
export function byId<T extends { id: string }>(records: readonly T[]): Map<string, T> {
  return new Map(records.map((record) => [record.id, record]));
}
