import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from '@20minutes/s3rver';
import type { ObjectStorageConfig } from '../../src/storage/object-storage.ts';

/**
 * An S3-compatible server on this machine that checks SigV4 signatures and expiry, as
 * S3 does (the fork @20minutes/s3rver; the original s3rver 3.x accepts tampered URLs).
 * Its one account is the well-known S3RVER/S3RVER.
 */
export interface S3Server {
  config: ObjectStorageConfig;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'event-documents'): Promise<S3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), 's3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = (await server.run()) as { port: number };
  return {
    config: {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
