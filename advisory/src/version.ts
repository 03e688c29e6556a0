import manifest from '../package.json' with { type: 'json' };
import { CURRENT_SCHEMA_VERSION, SUPPORTED_SCHEMA_MAJOR } from './feed/format/schema.ts';

/** The client's version (semantic versioning), from one place: the workspace's package.json. */
export const CLIENT_VERSION: string = manifest.version;

/** The SPDX identifier of the licence the code is offered under (LICENSE at the root). */
export const LICENSE_ID: string = manifest.license;

/** `--version` of every command: the client, the feed schemas it reads and writes, and its licence. */
export function versionText(command: string): string {
  return [
    `${command} ${CLIENT_VERSION}`,
    `feed schema: reads ${SUPPORTED_SCHEMA_MAJOR}.x, writes ${CURRENT_SCHEMA_VERSION}`,
    `licence: ${LICENSE_ID} (Functional Source License 1.1; each release becomes Apache-2.0 two years after it is published)`,
  ].join('\n');
}
