import manifest from '../package.json' with { type: 'json' };
import { CURRENT_SCHEMA_VERSION, SUPPORTED_SCHEMA_MAJOR } from './feed/format/schema.ts';

/** The client's version (semantic versioning), from one place: the workspace's package.json. */
export const CLIENT_VERSION: string = manifest.version;

/** `--version` of every command: the client, and the feed schemas it reads and writes. */
export function versionText(command: string): string {
  return `${command} ${CLIENT_VERSION}\nfeed schema: reads ${SUPPORTED_SCHEMA_MAJOR}.x, writes ${CURRENT_SCHEMA_VERSION}`;
}
