import { catalogues, type Language, languages, type MessageKey } from './messages.ts';

/** The user's own choice, kept on this device (and on their user record, when signed in). */
const choiceKey = 'shifts.language';

export function storedChoice(): Language | null {
  const value = localStorage.getItem(choiceKey);
  return value !== null && (languages as readonly string[]).includes(value) ? (value as Language) : null;
}

export function storeChoice(language: Language | null): void {
  if (language === null) localStorage.removeItem(choiceKey);
  else localStorage.setItem(choiceKey, language);
}

/** The first supported language of a list of BCP 47 tags ("de-AT" is German). */
export function supported(tags: readonly (string | null | undefined)[]): Language | null {
  for (const tag of tags) {
    const base = tag?.toLowerCase().split('-')[0];
    if (base && (languages as readonly string[]).includes(base)) return base as Language;
  }
  return null;
}

/**
 * The language to show: the user's choice, else the browser's, else the tenant's, else
 * English.
 */
export function chooseLanguage(
  choice: Language | null,
  browser: readonly string[],
  tenant?: string,
): Language {
  return choice ?? supported(browser) ?? supported([tenant]) ?? 'en';
}

export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

/** A message with its `{name}` marks filled in; a mark without a value stays as it is. */
export function fill(message: string, values?: Record<string, string | number>): string {
  return message.replace(/\{(\w+)\}/g, (whole, name: string) =>
    values && name in values ? String(values[name]) : whole,
  );
}

export function translator(language: Language): Translate {
  const messages = catalogues[language];
  return (key, values) => fill(messages[key], values);
}

/**
 * The locale dates and numbers are written in: the browser's own tag for the language
 * shown (en-GB writes 24-hour times, en-US does not), else the bare language.
 */
export function formatLocale(language: Language, browser: readonly string[]): string {
  return browser.find((tag) => supported([tag]) === language) ?? language;
}
