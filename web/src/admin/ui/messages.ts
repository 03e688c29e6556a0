/** Texts every manager's screen shares: actions, states, and refusals in an admin's words. */
export const en = {
  'admin.save': 'Save',
  'admin.cancel': 'Cancel',
  'admin.delete': 'Delete',
  'admin.close': 'Close',
  'admin.saved': 'Saved.',
  'admin.loading': 'Loading…',
  'admin.empty': 'Nothing here yet.',
  'admin.error.NOT_QUALIFIED': 'This person is not qualified for the role of this slot.',
  'admin.error.OVERLAPPING_ASSIGNMENT': 'This person already works at that time.',
  'admin.error.UNAVAILABLE': 'This person has approved time off then.',
  'admin.error.ALREADY_ASSIGNED': 'This person is on this shift already.',
  'admin.error.SLOT_FULL': 'This slot is full.',
  'admin.error.USER_INACTIVE': 'This person is deactivated.',
};

export const de: Record<keyof typeof en, string> = {
  'admin.save': 'Speichern',
  'admin.cancel': 'Abbrechen',
  'admin.delete': 'Löschen',
  'admin.close': 'Schließen',
  'admin.saved': 'Gespeichert.',
  'admin.loading': 'Wird geladen…',
  'admin.empty': 'Noch nichts da.',
  'admin.error.NOT_QUALIFIED': 'Diese Person ist für die Rolle dieses Platzes nicht qualifiziert.',
  'admin.error.OVERLAPPING_ASSIGNMENT': 'Diese Person arbeitet zu der Zeit schon.',
  'admin.error.UNAVAILABLE': 'Diese Person hat dann genehmigten Urlaub.',
  'admin.error.ALREADY_ASSIGNED': 'Diese Person ist schon in dieser Schicht.',
  'admin.error.SLOT_FULL': 'Dieser Platz ist voll.',
  'admin.error.USER_INACTIVE': 'Diese Person ist deaktiviert.',
};
