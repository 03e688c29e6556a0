/** The texts of the Schedule screen. */
export const en = {
  'schedule.heading': 'Schedule',
};

export const de: Record<keyof typeof en, string> = {
  'schedule.heading': 'Dienstplan',
};
