import { ApiError, NetworkError, OfflineError } from '../api/client.ts';
import type { Translate } from '../i18n/language.ts';
import { en, type MessageKey } from '../i18n/messages.ts';

/**
 * A refusal in words. The API's 409 codes each get a sentence of their own (the app keeps
 * no rule of its own: it says what the server said); a 422 keeps the server's detail.
 */
export function describeProblem(error: unknown, t: Translate): string {
  if (error instanceof OfflineError) return t('common.offlineChange');
  if (error instanceof NetworkError) return t('error.network');
  if (error instanceof ApiError) {
    const { code, message } = error.problem;
    if (code === 'VALIDATION_FAILED') return t('error.VALIDATION_FAILED', { detail: message });
    // Every code the catalogue has words for; another one is named as it came.
    const key = `error.${code}`;
    if (key in en) return t(key as MessageKey);
    return t('error.other', { code });
  }
  return t('error.other', { code: error instanceof Error ? error.name : 'unknown' });
}
