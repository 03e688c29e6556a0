/**
 * An asset: a host, a VM or a service, with the products it runs (name -> version as the
 * product reports it) and the facts reminders are measured from (name -> date or text).
 * Adapters produce them; evaluation gives each a verdict.
 */
export interface Asset {
  name: string;
  /** The inventory source that reported it (`inventory` for the file's own list). */
  source: string;
  products: Record<string, string>;
  facts: Record<string, string>;
  /** `unknown`: its source failed this time; it keeps the last names known, no versions. */
  status: 'ok' | 'unknown';
  /** Why it is unknown. */
  error?: string;
}
