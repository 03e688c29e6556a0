import { randomBytes } from 'node:crypto';
import { lstat, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256 } from '../../crypto/digest.ts';
import { keyId, parseSignatures, type SignatureBlock, signMessage } from '../../crypto/signify.ts';
import { scanFeed } from '../../feed/author/layout.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../../feed/format/rules.ts';
import { DirectorySource } from '../../feed/sources/directory.ts';
import { verifyFeed } from '../../feed/verify/verify-feed.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { requireDirectory } from '../inputs.ts';
import { type Io, printable, RejectedError, UsageError } from '../io.ts';
import { readSecretKey } from './keys.ts';

export const signSpec = {
  usage: 'advisory-feed sign',
  description: [
    'Signs manifest.yaml (Ed25519, signify format) into manifest.yaml.sig, after checking that the manifest still describes the files (sizes, hashes, advisories, dates): a feed edited after build is refused (exit 1), never signed.',
    'Signing again with another key adds a block after the others (key rotation: old and new key both sign during the overlap; signify -V checks the first block only; the appliance checks every block of a key it trusts, and each must verify). Signing again with the same key replaces its block.',
  ],
  options: {
    feed: { type: 'string', value: '<dir>', required: true, help: 'The feed directory.' },
    'secret-key': {
      type: 'string',
      value: '<key>',
      required: true,
      help: 'The secret key: made by keygen or by signify -G -n (unencrypted).',
    },
  },
} as const satisfies CommandSpec;

/**
 * The other keys' blocks of an existing signature file, in their order, kept only when
 * their comment names the manifest being signed (as this tool writes it): a block made
 * for another manifest could only fail, and would make `signify -V` fail when it is first.
 */
async function otherBlocks(
  signaturePath: string,
  keynum: Buffer,
  manifestSha256: string,
  io: Io,
): Promise<string> {
  let previous: string;
  try {
    const info = await lstat(signaturePath);
    if (info.isSymbolicLink())
      throw new UsageError(`${signaturePath} is a symbolic link; refusing to write through it`);
    if (!info.isFile()) throw new UsageError(`${signaturePath} is not a regular file`);
    previous = await readFile(signaturePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
  if (previous.trim() === '') return '';
  let blocks: SignatureBlock[];
  try {
    blocks = parseSignatures(previous);
  } catch (error) {
    // Whatever the parser finds wrong, the file is damaged: signing over it is refused.
    throw new RejectedError(
      `${signaturePath} is damaged (${(error as Error).message}); remove it and sign again`,
    );
  }
  const lines = previous.split('\n');
  return blocks
    .map((block, index) => ({ block, text: `${lines[index * 2]}\n${lines[index * 2 + 1]}\n` }))
    .filter(({ block }) => !block.keynum.equals(keynum))
    .filter(({ block }) => {
      const current = block.comment.includes(`manifest sha256 ${manifestSha256}`);
      if (!current)
        io.err(`dropped the signature of key ${keyId(block.keynum)}: it was made for another manifest`);
      return current;
    })
    .map(({ text }) => text)
    .join('');
}

export async function sign(argv: string[], io: Io, now: Date): Promise<number> {
  const values = parseCommand(signSpec, argv);
  await requireDirectory('--feed', values.feed);
  const secret = await readSecretKey(values['secret-key']);

  // What is signed must be what `verify` accepts, signature aside.
  const checked = await verifyFeed(new DirectorySource(values.feed), {
    trustedKeys: [],
    now,
    signature: 'ignored',
    keepAdvisories: false,
  });
  if (!checked.ok) {
    if ('rejection' in checked) {
      const hint =
        checked.rejection.reason === 'manifest-missing' ? ': run build first' : '; run build again';
      throw new RejectedError(`refusing to sign: ${checked.rejection.message}${hint}`);
    }
    throw new UsageError(`--feed ${values.feed}: ${checked.unreachable}`);
  }
  // Files added since build would go unpublished without a word: build again instead.
  const listed = new Set(
    Object.values(checked.feed.manifest.modules).flatMap(({ files }) => files.map((f) => f.path)),
  );
  const unlisted = [...scanFeed(values.feed).modules.values()].flat().filter((file) => !listed.has(file));
  if (unlisted.length > 0)
    throw new RejectedError(
      `refusing to sign: ${unlisted.length} advisory file${unlisted.length === 1 ? '' : 's'} not in the manifest (${printable(unlisted.slice(0, 3).join(', '))}${unlisted.length > 3 ? ', …' : ''}); run build again`,
    );
  const manifestPath = path.join(values.feed, MANIFEST_FILE);
  const manifest = await readFile(manifestPath);
  if (checked.feed.manifestSha256 !== sha256(manifest))
    throw new RejectedError('manifest.yaml changed while it was being checked; sign again');
  const signaturePath = path.join(values.feed, SIGNATURE_FILE);
  const kept = await otherBlocks(signaturePath, secret.keynum, checked.feed.manifestSha256, io);
  const text =
    kept +
    signMessage(
      secret,
      manifest,
      `verify with ${keyId(secret.keynum)}.pub; manifest sha256 ${checked.feed.manifestSha256}`,
    );
  // Written beside it and renamed over it: a reader sees the old or the new file, and a
  // link planted at the signature's name is replaced, never written through.
  const temporary = `${signaturePath}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { flag: 'wx', mode: 0o644 });
    await rename(temporary, signaturePath);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new UsageError(`${signaturePath}: ${(error as Error).message}`);
  }
  const blocks = parseSignatures(text).length;
  io.out(
    `signed ${manifestPath} with key ${keyId(secret.keynum)} (${blocks} signature block${blocks === 1 ? '' : 's'})`,
  );
  return 0;
}
