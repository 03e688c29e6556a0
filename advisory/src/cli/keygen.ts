import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateKeyPair } from '../feed/signify.ts';
import { FeedError, type Io, UsageError } from './errors.ts';

export const keygenHelp = `Usage: advisory-feed keygen --secret-key <file> --public-key <file> [--comment <text>]

Creates an Ed25519 key pair in signify's format. The secret key is written with mode
0600; existing files are never overwritten. Keep the secret key offline; ship the public
key with the appliance.`;

export function keygen(argv: string[], io: Io): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      'secret-key': { type: 'string' },
      'public-key': { type: 'string' },
      comment: { type: 'string', default: 'advisory feed' },
    },
    strict: true,
  });
  const secretFile = values['secret-key'];
  const publicFile = values['public-key'];
  if (!secretFile || !publicFile) throw new UsageError('keygen needs --secret-key and --public-key');
  if (secretFile === publicFile)
    throw new UsageError('--secret-key and --public-key must be different files');
  const pair = generateKeyPair(values.comment);
  try {
    // 'wx': fail if the file exists, so a key can never be replaced by accident.
    writeFileSync(secretFile, pair.secretKey, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new FeedError(`${secretFile} exists; refusing to overwrite a key`);
    throw error;
  }
  try {
    writeFileSync(publicFile, pair.publicKey, { mode: 0o644, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new FeedError(`${publicFile} exists; refusing to overwrite a key`);
    throw error;
  }
  io.out(`wrote secret key ${secretFile} (mode 0600) and public key ${publicFile}`);
  return 0;
}
