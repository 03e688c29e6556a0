/** The texts of the Approvals screen. */
export const en = {
  'approvals.heading': 'Approvals',
};

export const de: Record<keyof typeof en, string> = {
  'approvals.heading': 'Freigaben',
};
