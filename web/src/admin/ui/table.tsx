import type { ComponentChildren } from 'preact';

/**
 * A table of the manager's screens: named by a caption only screen readers hear, one row of
 * column headers (`head`: its `<th scope="col">` cells), the rows as children.
 */
export function AdminTable({
  caption,
  class: className,
  head,
  children,
}: {
  caption: string;
  /** A class besides `admin-table`. */
  class?: string;
  head: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <table class={className ? `admin-table ${className}` : 'admin-table'}>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>{head}</tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

/** A column header only screen readers hear (a column of buttons needs no visible title). */
export function UnseenHeader({ label }: { label: string }) {
  return (
    <th scope="col">
      <span class="visually-hidden">{label}</span>
    </th>
  );
}
