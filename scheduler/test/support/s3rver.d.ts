/** The part of @20minutes/s3rver (no published types) the tests use. */
declare module '@20minutes/s3rver' {
  interface S3rverOptions {
    port: number;
    address: string;
    directory: string;
    silent: boolean;
    configureBuckets: { name: string }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<unknown>;
    close(): Promise<void>;
  }
}
