import { lstat, rm, writeFile } from 'node:fs/promises';
import { generateKeyPair } from '../../crypto/signify.ts';
import { type CommandSpec, parseCommand } from '../command-table.ts';
import { type Io, UsageError } from '../io.ts';

export const keygenSpec = {
  usage: 'advisory-feed keygen',
  description: [
    "Creates an Ed25519 key pair in signify's format. Existing files are never overwritten, and a failure leaves neither file behind.",
  ],
  options: {
    'secret-key': {
      type: 'string',
      value: '<file>',
      required: true,
      help: 'Where the secret key goes, written with mode 0600. Keep it offline.',
    },
    'public-key': {
      type: 'string',
      value: '<file>',
      required: true,
      help: 'Where the public key goes. Ship it with the appliance.',
    },
    comment: {
      type: 'string',
      value: '<text>',
      default: 'advisory feed',
      help: "The key files' untrusted comment: one line of at most 200 printable characters.",
    },
  },
} as const satisfies CommandSpec;

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

export async function keygen(argv: string[], io: Io): Promise<number> {
  const values = parseCommand(keygenSpec, argv);
  const secretFile = values['secret-key'];
  const publicFile = values['public-key'];
  const comment = values.comment;
  if (secretFile === publicFile)
    throw new UsageError('--secret-key and --public-key must be different files');
  // The comment is written on the key's first line: it must stay one line of text.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(comment) || comment.length > 200)
    throw new UsageError('--comment must be one line of at most 200 printable characters');
  for (const file of [secretFile, publicFile]) {
    if (await exists(file)) throw new UsageError(`${file} exists; refusing to overwrite a key`);
  }
  const pair = generateKeyPair(comment);
  // 'wx' refuses a file that appeared meanwhile; a failure takes the secret key back.
  try {
    await writeFile(secretFile, pair.secretKey, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw new UsageError(`${secretFile}: ${(error as Error).message}`);
  }
  try {
    await writeFile(publicFile, pair.publicKey, { mode: 0o644, flag: 'wx' });
  } catch (error) {
    await rm(secretFile, { force: true });
    throw new UsageError(`${publicFile}: ${(error as Error).message}; no key was made`);
  }
  io.out(`wrote secret key ${secretFile} (mode 0600) and public key ${publicFile}`);
  return 0;
}
