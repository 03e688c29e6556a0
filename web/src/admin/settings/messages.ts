/** The texts of the Settings screen. */
export const en = {
  'settings.heading': 'Settings',
};

export const de: Record<keyof typeof en, string> = {
  'settings.heading': 'Einstellungen',
};
