import { buildFeed } from '../../feed/author/build.ts';
import { FEED_VERSION_FORMS, feedDateOf, parseFeedVersion } from '../../feed/format/feed-version.ts';
import { MAX_VALIDITY_MS } from '../../feed/format/rules.ts';
import { parseDuration } from '../../time/durations.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { requireDirectory } from '../inputs.ts';
import { EXIT_REJECTED, forInput, type Io, UsageError } from '../io.ts';
import { errorCount, printFindings } from './findings.ts';

export const buildSpec = {
  usage: 'advisory-feed build',
  description: [
    "Lints every advisory under the feed's module folders, prints each finding with file and line, and fails (exit 1) on errors: also on a file that cannot be published as it is (a link, a FIFO, a name a client would refuse). A clean feed gets manifest.yaml with every file's size and SHA-256; a signature of an earlier manifest is removed (sign next).",
  ],
  options: {
    feed: { type: 'string', value: '<dir>', required: true, help: 'The feed directory.' },
    'feed-version': {
      type: 'string',
      value: 'YYYY.MM.DD[.N]',
      help: "YYYY.MM.DD (today's UTC date) or YYYY.MM.DD.N (N from 1 to 99: the N-th extra release of today, out of band), after the version of the manifest already in the feed directory (an older or equal one: exit 1). Default: the next free version after that manifest: today's date when that one is of an earlier day (or there is none), else the next N.",
    },
    'expires-in': {
      type: 'string',
      value: '<duration>',
      default: '14d',
      help: 'How long clients accept this feed: a number and s, m (minutes), h, d or w; at most 366 days.',
    },
  },
} as const satisfies CommandSpec;

export async function build(argv: string[], io: Io, now: Date): Promise<number> {
  const values = parseCommand(buildSpec, argv);
  const today = feedDateOf(now);
  const feedVersion = values['feed-version'];
  if (feedVersion !== undefined) {
    const parsed = parseFeedVersion(feedVersion);
    if (!parsed) throw new UsageError(`--feed-version must be a real date written ${FEED_VERSION_FORMS}`);
    if (parsed.date !== today)
      throw new UsageError(
        `--feed-version ${feedVersion} is not of today's UTC date ${today}: a feed's version is the date it is published`,
      );
  }
  const expiresInMs = await forInput('--expires-in', () =>
    parseDuration(values['expires-in'], { min: 60_000, max: MAX_VALIDITY_MS }),
  );
  await requireDirectory('--feed', values.feed);

  const result = buildFeed({
    feedDir: values.feed,
    ...(feedVersion !== undefined ? { feedVersion } : {}),
    expiresInMs,
    now,
  });
  const errors = printFindings(io, result.findings);
  if (!result.ok) {
    io.err(`build failed: ${errorCount(errors)}; no manifest written`);
    return EXIT_REJECTED;
  }
  const counts = Object.entries(result.manifest.modules).map(([m, { files }]) => `${m} ${files.length}`);
  io.out(
    `wrote manifest.yaml: feed ${result.manifest.feed_version}, expires ${result.manifest.expires_at}; ${counts.join(', ')}`,
  );
  if (result.removedSignature) io.out('removed the old manifest.yaml.sig: sign the new manifest');
  return 0;
}
