import { ApiError } from '../../api/client.ts';
import type { Translate } from '../../i18n/language.ts';
import { describeProblem } from '../../ui/problems.ts';
import { type AdminKey, type AdminText, adminCatalogues } from '../text.ts';

/**
 * A refusal in an admin's words: the codes that are about the person being planned (not
 * qualified, overlap, time off) get a sentence about them; every other code is said as the
 * staff app says it.
 */
export function describeRefusal(error: unknown, text: AdminText, t: Translate): string {
  if (error instanceof ApiError) {
    const key = `admin.error.${error.problem.code}`;
    if (key in adminCatalogues.en) return text(key as AdminKey);
  }
  return describeProblem(error, t);
}
