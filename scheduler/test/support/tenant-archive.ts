import { Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { extract, pack } from 'tar-stream';

/** A tenant archive's files, in archive order: name to content. */
export type ArchiveFiles = Map<string, Buffer>;

/** Unpacks a tar.gz (the tenant export) into its files, in the order they were packed. */
export async function readArchive(bytes: Buffer): Promise<ArchiveFiles> {
  const files: ArchiveFiles = new Map();
  const tar = extract();
  Readable.from([bytes]).pipe(createGunzip()).pipe(tar);
  for await (const entry of tar) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk as Buffer);
    files.set(entry.header.name, Buffer.concat(chunks));
  }
  return files;
}

/** The rows of one table file of an archive (JSON Lines). */
export function archiveRows(files: ArchiveFiles, table: string): Record<string, unknown>[] {
  const text = files.get(`tables/${table}.jsonl`)?.toString('utf8') ?? '';
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Packs files into a tar.gz as the export does (an altered archive, for the import's refusals). */
export async function packArchive(files: ArchiveFiles): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  const gzip = createGzip();
  const done = (async () => {
    for await (const chunk of gzip) chunks.push(chunk as Buffer);
  })();
  tar.pipe(gzip);
  for (const [name, content] of files) tar.entry({ name, size: content.length }, content);
  tar.finalize();
  await done;
  return Buffer.concat(chunks);
}
