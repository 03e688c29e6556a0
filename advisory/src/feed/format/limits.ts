/** Size caps applied before anything is read or parsed (TUF's endless-data attack). */
export interface FeedLimits {
  manifestBytes: number;
  signatureBytes: number;
  fileBytes: number;
  totalBytes: number;
  files: number;
}

export const defaultLimits: FeedLimits = {
  manifestBytes: 32 * 1024 * 1024,
  signatureBytes: 16 * 1024,
  fileBytes: 1024 * 1024,
  totalBytes: 512 * 1024 * 1024,
  files: 100_000,
};
