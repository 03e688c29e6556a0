import { existsSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateKeyPair } from '../feed/signify.ts';
import { FeedError, type Io, UsageError } from './errors.ts';

export const keygenHelp = `Usage: advisory-feed keygen --secret-key <file> --public-key <file> [--comment <text>]

Creates an Ed25519 key pair in signify's format. The secret key is written with mode
0600; existing files are never overwritten. Keep the secret key offline; ship the public
key with the appliance.`;

/** 'wx': fails if the file exists, so a key is never replaced by accident. */
function writeNewFile(file: string, text: string, mode: number): void {
  try {
    writeFileSync(file, text, { mode, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new FeedError(`${file} exists; refusing to overwrite a key`);
    throw error;
  }
}

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
  // Check both before writing either, so a refusal leaves no half-made pair behind.
  if (existsSync(publicFile)) throw new FeedError(`${publicFile} exists; refusing to overwrite a key`);
  const pair = generateKeyPair(values.comment);
  writeNewFile(secretFile, pair.secretKey, 0o600);
  writeNewFile(publicFile, pair.publicKey, 0o644);
  io.out(`wrote secret key ${secretFile} (mode 0600) and public key ${publicFile}`);
  return 0;
}
