import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * A section that opens and closes: its heading is a button that says whether it is
 * expanded, and its content is drawn (and so reads what it needs) only once it is opened.
 */
export function Disclosure({
  id,
  title,
  open = false,
  children,
}: {
  /** Names the heading (`<id>-heading`) and the panel (`<id>-panel`). */
  id: string;
  title: string;
  open?: boolean;
  children: ComponentChildren;
}) {
  const [expanded, setExpanded] = useState(open);
  return (
    <section class="admin-disclosure" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>
        <button
          type="button"
          class="admin-disclosure-toggle"
          aria-expanded={expanded}
          aria-controls={`${id}-panel`}
          onClick={() => setExpanded(!expanded)}
        >
          {title}
        </button>
      </h2>
      <div id={`${id}-panel`} hidden={!expanded}>
        {expanded && children}
      </div>
    </section>
  );
}
