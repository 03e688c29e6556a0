import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { useText } from '../text.ts';

/**
 * A modal dialog: the browser's own `<dialog>` opened with showModal, so focus stays in it
 * and the page behind is inert; Escape closes it (its `cancel`), and focus goes back to
 * what was focused before it opened. Rendered only while open.
 */
export function Dialog({
  title,
  onClose,
  children,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const text = useText();
  const ref = useRef<HTMLDialogElement>(null);
  const heading = useId();
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const closed = () => close.current();
    dialog.addEventListener('close', closed);
    return () => {
      dialog.removeEventListener('close', closed);
      if (dialog.open) dialog.close();
      // The opener may have been drawn anew meanwhile: then the heading of the screen.
      if (opener?.isConnected) opener.focus();
      else document.querySelector<HTMLElement>('main h1')?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={wide ? 'admin-dialog admin-dialog-wide' : 'admin-dialog'}
      aria-labelledby={heading}
    >
      <div class="admin-dialog-head">
        <h2 id={heading}>{title}</h2>
        <button type="button" class="button" onClick={() => ref.current?.close()}>
          {text('admin.close')}
        </button>
      </div>
      {children}
    </dialog>
  );
}
