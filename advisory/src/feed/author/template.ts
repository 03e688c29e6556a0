import { Compile } from 'typebox/compile';
import { AdvisoryId } from '../format/schema.ts';

/**
 * The advisory template `advisory-feed new` writes. Everything the author must decide is
 * a placeholder starting with PLACEHOLDER; lint reports any left in (a placeholder in a
 * title or summary would otherwise pass the schema and be published).
 */
export const PLACEHOLDER = '<<fill in';

const idValidator = Compile(AdvisoryId);

/** Why `id` cannot be an advisory id, or null. */
export function advisoryIdProblem(id: string): string | null {
  return idValidator.Check(id)
    ? null
    : `advisory id "${id}": 3 to 64 ASCII letters, digits, ".", "_" and "-", starting with a letter or digit`;
}

/** Where the advisory `id` of `module` lives, relative to the feed directory. */
export const templatePath = (module: string, id: string): string => `${module}/${id.toLowerCase()}.yaml`;

const DAY_MS = 86_400_000;
const day = (instant: Date) => instant.toISOString().slice(0, 10);

/** The template of advisory `id` in `module`, effective `today` and for a year. */
export function advisoryTemplate(module: string, id: string, today: Date): string {
  const fill = (what: string) => JSON.stringify(`${PLACEHOLDER}: ${what}>>`);
  return `# Advisory ${id} of module ${module}, written by \`advisory-feed new\`.
# Replace every "${PLACEHOLDER}: ...>>" (drop the optional fields you do not need),
# then check the feed with \`advisory-feed lint --feed <dir>\`. Every field is described
# in the feed format documentation (docs/advisory/feed.md, "Advisory file").
id: ${JSON.stringify(id)}
title: ${fill('one line, e.g. Proxmox VE 8 is end of life')}
# The product key assets report: proxmox-ve, nextcloud, postgresql, debian, php, ...
product: ${fill('the product key')}
# The affected versions, in npm semver syntax: ">=8.0.0 <9.0.0", "<32", "16.x".
affects: ${fill('the affected versions')}
# One of: install, hold, wait-for-patch, eol, blocked.
verdict: ${fill('the verdict')}
# Optional: the version to move to; it must lie outside affects.
recommended_version: ${fill('the version to move to')}
# The advisory counts while effective <= now < expires (YYYY-MM-DD is UTC midnight).
effective: "${day(today)}"
expires: "${day(new Date(today.getTime() + 365 * DAY_MS))}"
# Optional: CVEs to highlight (cite each one among the references).
# cves:
#   - id: CVE-YYYY-NNNN
#     cvss: 9.8
#     summary: what it allows
# Optional: what must already be in place before this upgrade.
# requires:
#   - product: php
#     version: ">=8.2.0 <8.6.0"
#     reason: why it is needed
summary: >-
  ${PLACEHOLDER}: what to do, in a paragraph>>
references:
  - ${fill('the URL of the source, https://...')}
`;
}

/** The fields of a parsed document whose text still holds a placeholder, in document order. */
export function placeholderFields(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return value.includes(PLACEHOLDER) ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => placeholderFields(item, `${at}[${index}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, child]) =>
      placeholderFields(child, at ? `${at}.${key}` : key),
    );
  return [];
}
