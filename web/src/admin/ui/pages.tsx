import { useState } from 'preact/hooks';
import { type Resource, useResource } from '../../ui/resource.ts';

/** One page of a list the API answers a page at a time; `last` when no older one follows. */
export type Page<T> = { entries: T[]; last: boolean };

export type Pages<T> = {
  first: Resource<Page<T>>;
  reload: () => Promise<void>;
  /** The first page with the ones read after it. */
  joined(first: Page<T>): Page<T>;
  loadingMore: boolean;
  /** Reads the page after the last of `entries`. */
  loadMore(entries: readonly T[]): void;
};

/**
 * A list read a page at a time: the first page whenever `deps` change (the pages read after
 * it forgotten), more on asking, each after the id of the last entry shown.
 */
export function usePages<T extends { id: string }>(
  load: (after?: string) => Promise<Page<T>>,
  deps: unknown[],
): Pages<T> {
  const [more, setMore] = useState<Page<T> | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [first, reload] = useResource(() => {
    setMore(null);
    return load();
  }, deps);
  return {
    first,
    reload,
    joined: (page) => ({
      entries: [...page.entries, ...(more?.entries ?? [])],
      last: more ? more.last : page.last,
    }),
    loadingMore,
    loadMore(entries) {
      setLoadingMore(true);
      void load(entries[entries.length - 1]?.id)
        .then((next) => setMore({ entries: [...(more?.entries ?? []), ...next.entries], last: next.last }))
        .finally(() => setLoadingMore(false));
    },
  };
}

/** The button that reads the next page, while there is one. */
export function MoreButton<T extends { id: string }>({
  pages,
  shown,
  label,
}: {
  pages: Pages<T>;
  shown: Page<T>;
  label: string;
}) {
  if (shown.last) return null;
  return (
    <button
      type="button"
      class="button"
      disabled={pages.loadingMore}
      onClick={() => pages.loadMore(shown.entries)}
    >
      {label}
    </button>
  );
}
