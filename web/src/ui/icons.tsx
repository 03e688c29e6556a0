/**
 * The navigation's icons, drawn inline (no icon font, nothing fetched): a glyph a phone's
 * fonts lack would show as a box. Decorative: the link's text names it.
 */
const paths = {
  calendar: 'M7 3v3M17 3v3M4 9h16M5 5h14a1 1 0 0 1 1 1v13a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V6a1 1 0 0 1 1-1Z',
  plus: 'M12 8v8M8 12h8M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18Z',
  swap: 'M7 7h12l-3-3M17 17H5l3 3',
  clock: 'M12 7v5l3 2M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18Z',
  person: 'M12 12a4 4 0 1 0 0-8a4 4 0 1 0 0 8ZM4 21c1-4 4.5-6 8-6s7 2 8 6',
} as const;

export type IconName = keyof typeof paths;

export function Icon({ name }: { name: IconName }) {
  return (
    <svg
      class="icon"
      viewBox="0 0 24 24"
      width="24"
      height="24"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
    >
      <path d={paths[name]} />
    </svg>
  );
}
