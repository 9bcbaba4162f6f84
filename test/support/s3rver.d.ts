// The parts of the s3rver package (no bundled types) that the tests use.
declare module "s3rver" {
  interface S3rverOptions {
    readonly address?: string
    readonly port?: number
    readonly silent?: boolean
    readonly directory: string
    readonly resetOnClose?: boolean
    readonly configureBuckets?: ReadonlyArray<{ readonly name: string }>
  }
  interface KoaContext {
    readonly method: string
    readonly url: string
  }
  export default class S3rver {
    constructor(options: S3rverOptions)
    /** Koa's middleware list; entries added before run() see every request. */
    readonly middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>
    run(): Promise<{ readonly address: string; readonly port: number }>
    close(): Promise<void>
  }
}
