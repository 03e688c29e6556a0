import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api/client.ts';
import type { Session } from './auth/session.ts';
import type { Formatter } from './i18n/format.ts';
import type { Translate } from './i18n/language.ts';
import type { Language } from './i18n/messages.ts';

/** What every screen needs: the API, who is signed in, and how to speak to them. */
export interface AppContextValue {
  api: Api;
  session: Session;
  /** The signed-in user's subject: offline copies are kept per user. */
  userKey: string;
  language: Language;
  /** The user's own choice, or null for "as the browser". */
  languageChoice: Language | null;
  setLanguage(choice: Language | null): void;
  timeZone: string;
  /** The tenant shows who else is on a shift (tenant setting shift_colleagues_visible). */
  showColleagues: boolean;
  /** The signed-in user is an admin: the manager's screens are offered (the API decides). */
  isAdmin: boolean;
  t: Translate;
  format: Formatter;
}

export const AppContext = createContext<AppContextValue | null>(null);

export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (!value) throw new Error('useApp outside the signed-in app');
  return value;
}
