import { describe, expect, it } from 'vitest';
import { chooseLanguage, formatLocale, supported, translator } from '../../src/i18n/language.ts';
import { de, en } from '../../src/i18n/messages.ts';

describe('the language the app speaks', () => {
  it('is the user’s choice first, then the browser’s, then the tenant’s, then English', () => {
    expect(chooseLanguage('de', ['en-GB'], 'en')).toBe('de');
    expect(chooseLanguage(null, ['fr-FR', 'de-AT'], 'en')).toBe('de');
    expect(chooseLanguage(null, ['fr-FR'], 'de-DE')).toBe('de');
    expect(chooseLanguage(null, ['fr-FR'], 'fr')).toBe('en');
    expect(chooseLanguage(null, [], undefined)).toBe('en');
  });

  it('reads a language from any region or script of it', () => {
    expect(supported(['DE-ch'])).toBe('de');
    expect(supported(['en-Latn-US'])).toBe('en');
    expect(supported(['pt', null, undefined])).toBeNull();
  });

  it('writes dates in the browser’s own variant of the language shown', () => {
    expect(formatLocale('en', ['en-GB', 'de-DE'])).toBe('en-GB');
    expect(formatLocale('de', ['en-GB', 'de-AT'])).toBe('de-AT');
    expect(formatLocale('de', ['en-GB'])).toBe('de');
  });

  it('fills in values and leaves unknown placeholders visible', () => {
    const t = translator('en');
    expect(t('common.filled', { filled: 2, needed: 3 })).toBe('2 of 3 filled');
    expect(t('common.filled', { filled: 2 })).toBe('2 of {needed} filled');
    expect(translator('de')('common.filled', { filled: 1, needed: 4 })).toBe('1 von 4 besetzt');
  });

  it('has every text in German, none left empty or in English by accident', () => {
    expect(Object.keys(de).sort()).toEqual(Object.keys(en).sort());
    for (const [key, text] of Object.entries(de)) {
      expect(text.trim(), key).not.toBe('');
      // Each placeholder of the English text is in the German one.
      for (const name of en[key as keyof typeof en].match(/\{\w+\}/g) ?? [])
        expect(text, key).toContain(name);
    }
    const same = Object.keys(en).filter((key) => en[key as keyof typeof en] === de[key as keyof typeof de]);
    expect(same).toEqual([]);
  });
});
