import type { AdvisoryMatch } from './verdicts.ts';

/**
 * The advice of an advisory as every reader shows it (dashboard, `advisory check`, the
 * verdicts document): what to do, where to read more, and the CVEs with their public
 * records. References are feed text: only an http(s) URL becomes a link; anything else
 * is shown as the text it is, never followed.
 */
export interface Reference {
  /** The reference exactly as the feed gives it. */
  text: string;
  /** The URL to link to (normalised by the URL parser), or null when it is not http(s). */
  href: string | null;
}

export interface CveAdvice {
  id: string;
  cvss: number | null;
  summary: string | null;
  /** The CVE's public record. */
  url: string;
}

export interface Advice {
  summary: string;
  references: Reference[];
  cves: CveAdvice[];
}

/** The public record of a CVE (the CVE Program's own site). */
export function cveRecordUrl(id: string): string {
  return `https://www.cve.org/CVERecord?id=${encodeURIComponent(id)}`;
}

/**
 * A reference as a link when it parses as an http or https URL. The feed's schema asks
 * for that already, but the check is repeated where the link is made: a `javascript:` or
 * `data:` URL must never become clickable, whatever a future schema lets through.
 */
export function referenceLink(text: string): Reference {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { text, href: null };
  }
  return { text, href: url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null };
}

export function adviceOf(match: Pick<AdvisoryMatch, 'summary' | 'references' | 'cves'>): Advice {
  return {
    summary: match.summary,
    references: match.references.map(referenceLink),
    cves: match.cves.map((cve) => ({ ...cve, url: cveRecordUrl(cve.id) })),
  };
}
