/** The language tag as the runtime knows it, or null when it knows no such language. */
export function supportedLocale(tag: string): string | null {
  try {
    const [known] = Intl.DateTimeFormat.supportedLocalesOf([tag]);
    return known ? new Intl.Locale(tag).toString() : null;
  } catch {
    return null;
  }
}
