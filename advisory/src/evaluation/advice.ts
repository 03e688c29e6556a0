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
function cveRecordUrl(id: string): string {
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

/** CVEs, each with the address of its public record added. */
export function withCveRecords<T extends { id: string }>(cves: readonly T[]): (T & { url: string })[] {
  return cves.map((cve) => ({ ...cve, url: cveRecordUrl(cve.id) }));
}

export function adviceOf(match: Pick<AdvisoryMatch, 'summary' | 'references' | 'cves'>): Advice {
  return {
    summary: match.summary,
    references: match.references.map(referenceLink),
    cves: withCveRecords(match.cves),
  };
}

/** What the text form of advice needs: an alert from the outbox knows no CVSS scores. */
export interface AdviceText {
  summary: string;
  references: readonly Reference[];
  cves: readonly { id: string; cvss?: number | null; url: string }[];
}

/**
 * The advice as plain-text lines, each starting with `indent` (alert e-mails, `advisory
 * check --verbose`): the summary line by line, each CVE with its record, then the
 * references. A summary's lines are split on LF or CRLF (a CR left at a line's end would
 * garble a terminal or a mail body) and its blank lines dropped: the advice stays one
 * indented block, and an empty line keeps meaning the end of a section.
 */
export function adviceTextLines(advice: AdviceText, indent: string): string[] {
  const lines: string[] = [];
  for (const line of advice.summary.split(/\r?\n/)) if (line.trim()) lines.push(`${indent}${line.trimEnd()}`);
  for (const cve of advice.cves)
    lines.push(`${indent}${cve.id}${cve.cvss != null ? ` (CVSS ${cve.cvss})` : ''}: ${cve.url}`);
  for (const r of advice.references) lines.push(`${indent}${r.href ? '' : '(not a web address) '}${r.text}`);
  return lines;
}
