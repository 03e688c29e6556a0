import { parseArgs } from 'node:util';
import { buildFeed, isFeedVersion } from '../feed/build.ts';
import { parseDuration } from '../feed/duration.ts';
import { EXIT_BAD_FEED, type Io, UsageError } from './errors.ts';

export const buildHelp = `Usage: advisory-feed build --feed <dir> --feed-version YYYY.MM.DD [--expires-in 14d]

Lints every advisory under the feed's module folders, prints each finding with file and
line, and fails (exit 1) on errors. A clean feed gets manifest.yaml with every file's
size and SHA-256; a signature of an earlier manifest is removed (sign next).
--expires-in: how long clients accept this feed (m, h, d, w units; default 14d).`;

export function build(argv: string[], io: Io, now: Date): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      feed: { type: 'string' },
      'feed-version': { type: 'string' },
      'expires-in': { type: 'string', default: '14d' },
    },
    strict: true,
  });
  if (!values.feed) throw new UsageError('build needs --feed <dir>');
  const feedVersion = values['feed-version'];
  if (!feedVersion || !isFeedVersion(feedVersion))
    throw new UsageError('build needs --feed-version YYYY.MM.DD (a real date)');
  const expiresInMs = parseDuration(values['expires-in'] ?? '14d');
  if (!expiresInMs) throw new UsageError('--expires-in must look like 14d, 12h, 2w or 90m');

  const result = buildFeed({ feedDir: values.feed, feedVersion, expiresInMs, now });
  for (const finding of result.findings) {
    io.err(`${finding.file}:${finding.line}: ${finding.severity} [${finding.rule}] ${finding.message}`);
  }
  if (!result.ok) {
    const errors = result.findings.filter((f) => f.severity === 'error').length;
    io.err(`build failed: ${errors} error${errors === 1 ? '' : 's'}; no manifest written`);
    return EXIT_BAD_FEED;
  }
  const counts = Object.entries(result.manifest.modules).map(([m, { files }]) => `${m} ${files.length}`);
  io.out(
    `wrote manifest.yaml: feed ${feedVersion}, expires ${result.manifest.expires_at}; ${counts.join(', ')}`,
  );
  if (result.removedSignature) io.out('removed the old manifest.yaml.sig: sign the new manifest');
  return 0;
}
