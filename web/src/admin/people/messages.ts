/** The texts of the People screen. */
export const en = {
  'people.heading': 'People',
};

export const de: Record<keyof typeof en, string> = {
  'people.heading': 'Personen',
};
