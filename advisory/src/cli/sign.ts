import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../feed/files.ts';
import { keyId, parseSecretKey, parseSignatures, SignifyFormatError, signMessage } from '../feed/signify.ts';
import { FeedError, type Io, UsageError } from './errors.ts';

export const signHelp = `Usage: advisory-feed sign --feed <dir> --secret-key <key>

Signs manifest.yaml (Ed25519, signify format) into manifest.yaml.sig. Signing again with
another key adds a block (key rotation: old and new key both sign during the overlap;
signify -V checks the first block, this tool accepts any trusted one). Signing again with
the same key replaces its block. Accepts keys made by keygen or by signify -G -n.`;

export function sign(argv: string[], io: Io): number {
  const { values } = parseArgs({
    args: argv,
    options: { feed: { type: 'string' }, 'secret-key': { type: 'string' } },
    strict: true,
  });
  if (!values.feed || !values['secret-key'])
    throw new UsageError('sign needs --feed <dir> and --secret-key <key>');
  const manifestPath = path.join(values.feed, MANIFEST_FILE);
  if (!existsSync(manifestPath)) throw new FeedError(`${manifestPath} does not exist: run build first`);
  let secret: ReturnType<typeof parseSecretKey>;
  try {
    secret = parseSecretKey(readFileSync(values['secret-key'], 'utf8'));
  } catch (error) {
    if (error instanceof SignifyFormatError) throw new FeedError(`${values['secret-key']}: ${error.message}`);
    throw error;
  }
  const manifest = readFileSync(manifestPath);
  const signaturePath = path.join(values.feed, SIGNATURE_FILE);
  const block = signMessage(secret, manifest, `verify with ${keyId(secret.keynum)}.pub`);

  let existing = '';
  const previous = existsSync(signaturePath) ? readFileSync(signaturePath, 'utf8') : '';
  if (previous.trim() !== '') {
    const text = previous;
    try {
      // Keep other keys' blocks in their order; replace this key's own block.
      const lines = text.split('\n').filter((line, index, all) => index < all.length - 1 || line !== '');
      const kept: string[] = [];
      parseSignatures(text).forEach((other, index) => {
        if (!other.keynum.equals(secret.keynum)) kept.push(`${lines[index * 2]}\n${lines[index * 2 + 1]}\n`);
      });
      existing = kept.join('');
    } catch (error) {
      if (error instanceof SignifyFormatError)
        throw new FeedError(`${signaturePath} is damaged (${error.message}); remove it and sign again`);
      throw error;
    }
  }
  writeFileSync(signaturePath, existing + block);
  const blocks = parseSignatures(existing + block).length;
  io.out(
    `signed ${manifestPath} with key ${keyId(secret.keynum)} (${blocks} signature block${blocks === 1 ? '' : 's'})`,
  );
  return 0;
}
