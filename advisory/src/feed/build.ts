import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { sha256 } from '../crypto/digest.ts';
import { feedVersionOf, formatInstant } from '../time/instants.ts';
import { type Finding, lintFeed } from './lint.ts';
import { MANIFEST_FILE, MAX_VALIDITY_MS, manifestDateProblems, SIGNATURE_FILE } from './rules.ts';
import { CURRENT_SCHEMA_VERSION, type Manifest } from './schema.ts';

export interface BuildOptions {
  feedDir: string;
  /** The publication date, YYYY.MM.DD: today's UTC date (the default). */
  feedVersion?: string;
  expiresInMs: number;
  now?: Date;
}

export type BuildResult =
  | { ok: true; manifest: Manifest; findings: Finding[]; removedSignature: boolean }
  | { ok: false; findings: Finding[] };

const HEADER =
  '# Advisory feed manifest: written by `advisory-feed build`, signed by `advisory-feed sign`.\n';

/**
 * Lints the feed; only a clean feed gets a manifest (and any old signature goes). The
 * manifest obeys the rules `verify` applies (feed/rules.ts): its version is the UTC date
 * it is published on, it is valid for at most 366 days, and it lists only what `verify`
 * can read back, written by the YAML library's own serializer.
 */
export function buildFeed(options: BuildOptions): BuildResult {
  const now = options.now ?? new Date();
  const { findings, modules: layout } = lintFeed(options.feedDir, now);
  const manifestError = (message: string) =>
    findings.push({ severity: 'error', rule: 'manifest', file: MANIFEST_FILE, line: 1, message });
  if (!(options.expiresInMs > 0 && options.expiresInMs <= MAX_VALIDITY_MS)) {
    manifestError('the feed must expire more than 0 and at most 366 days after it is published');
    return { ok: false, findings };
  }
  const publishedAt = formatInstant(now);
  const dates = {
    feed_version: options.feedVersion ?? feedVersionOf(now),
    published_at: publishedAt,
    expires_at: formatInstant(new Date(now.getTime() + options.expiresInMs)),
  };
  for (const problem of manifestDateProblems(dates)) manifestError(problem);
  if (findings.some((f) => f.severity === 'error')) return { ok: false, findings };

  const modules: Manifest['modules'] = {};
  for (const [module, files] of layout) {
    modules[module] = {
      files: files.map((file) => {
        const data = readFileSync(path.join(options.feedDir, file));
        return { path: file, sha256: sha256(data), size: data.length };
      }),
    };
  }
  const manifest: Manifest = { schema_version: CURRENT_SCHEMA_VERSION, ...dates, modules };
  writeFileSync(path.join(options.feedDir, MANIFEST_FILE), HEADER + dumpManifest(manifest));
  // A signature over the previous manifest would only mislead: signing comes next.
  let removedSignature = false;
  try {
    rmSync(path.join(options.feedDir, SIGNATURE_FILE));
    removedSignature = true;
  } catch {
    // there was none
  }
  return { ok: true, manifest, findings, removedSignature };
}

/** The manifest as YAML: every string quoted, so no other YAML reader takes one for a number or date. */
export function dumpManifest(manifest: Manifest): string {
  return yaml.dump(manifest, { lineWidth: -1, noRefs: true, quotingType: '"', forceQuotes: true });
}
