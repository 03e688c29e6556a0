import { useApp } from '../app-context.ts';
import { fill } from '../i18n/language.ts';
import type { Language } from '../i18n/messages.ts';
import * as approvals from './approvals/messages.ts';
import * as people from './people/messages.ts';
import * as schedule from './schedule/messages.ts';
import * as settings from './settings/messages.ts';
import * as timesheets from './timesheets/messages.ts';
import * as shared from './ui/messages.ts';

/**
 * The manager's texts, in English and German: each screen keeps its own (its folder's
 * messages.ts, German typed to name every English key), merged here. They load with the
 * admin chunk, never with the staff app.
 */
const en = { ...shared.en, ...schedule.en, ...approvals.en, ...people.en, ...timesheets.en, ...settings.en };
export type AdminKey = keyof typeof en;
const de: Record<AdminKey, string> = {
  ...shared.de,
  ...schedule.de,
  ...approvals.de,
  ...people.de,
  ...timesheets.de,
  ...settings.de,
};
export const adminCatalogues: Record<Language, Record<AdminKey, string>> = { en, de };

export type AdminText = (key: AdminKey, values?: Record<string, string | number>) => string;

/** The manager's texts in the language the app speaks now. */
export function useText(): AdminText {
  const { language } = useApp();
  const messages = adminCatalogues[language];
  return (key, values) => fill(messages[key], values);
}
