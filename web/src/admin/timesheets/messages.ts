/** The texts of the Timesheets screen. */
export const en = {
  'timesheets.heading': 'Timesheets',
};

export const de: Record<keyof typeof en, string> = {
  'timesheets.heading': 'Zeiterfassung',
};
