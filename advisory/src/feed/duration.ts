/** "14d", "12h", "2w", "30m": a positive duration in milliseconds, or null. */
export function parseDuration(text: string): number | null {
  const match = /^([1-9][0-9]{0,5})([mhdw])$/.exec(text.trim());
  if (!match) return null;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 'm' | 'h' | 'd' | 'w'];
  return Number(match[1]) * unit;
}
