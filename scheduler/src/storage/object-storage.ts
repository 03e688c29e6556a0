import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

/** Where event documents live: any S3-compatible store (AWS S3, MinIO, Ceph, Garage). */
export interface ObjectStorageConfig {
  endpoint: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

export interface PresignedPut {
  url: string;
  /** The headers the PUT must carry exactly as given: they are part of the signature. */
  headers: Record<string, string>;
}

/** Presigned URLs only: the API never carries file bytes itself. */
export interface ObjectStorage {
  presignPut(
    key: string,
    contentType: string,
    sizeBytes: number,
    signedAt: Date,
    expiresInSeconds: number,
  ): Promise<PresignedPut>;
  presignGet(key: string, filename: string, signedAt: Date, expiresInSeconds: number): Promise<string>;
}

/**
 * A filename as a Content-Disposition value, in the characters every S3 implementation
 * signs alike: printable ASCII without quotes, backslashes and the sub-delimiters that
 * some encode in the canonical query and some do not (! ' ( ) *). Others become `_`;
 * the record keeps the exact name.
 */
function attachment(filename: string): string {
  return `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\!'()*]/g, '_')}"`;
}

export function createS3Storage(config: ObjectStorageConfig): ObjectStorage {
  const client = new S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    // Otherwise the URL carries a checksum of an empty body, which real S3 then enforces.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    async presignPut(key, contentType, sizeBytes, signedAt, expiresIn) {
      const command = new PutObjectCommand({
        Bucket: config.bucket,
        Key: key,
        ContentType: contentType,
        ContentLength: sizeBytes,
      });
      // Content-Type and Content-Length are signed: another type or size is refused.
      const url = await getSignedUrl(client, command, {
        expiresIn,
        signingDate: signedAt,
        signableHeaders: new Set(['content-type', 'content-length']),
      });
      return { url, headers: { 'content-type': contentType, 'content-length': String(sizeBytes) } };
    },
    presignGet(key, filename, signedAt, expiresIn) {
      const command = new GetObjectCommand({
        Bucket: config.bucket,
        Key: key,
        ResponseContentDisposition: attachment(filename),
      });
      return getSignedUrl(client, command, { expiresIn, signingDate: signedAt });
    },
  };
}
