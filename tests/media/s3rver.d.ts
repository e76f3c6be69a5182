declare module "s3rver" {
  /** The parts of s3rver (a fake S3 server) the tests use. */
  export default class S3rver {
    constructor(options: Record<string, unknown>);
    run(): Promise<{ port: number }>;
    close(): Promise<void>;
  }
}
