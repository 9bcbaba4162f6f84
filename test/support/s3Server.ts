import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import S3rver from "s3rver"
import { afterAll, beforeAll } from "vitest"

export interface S3ServerHandle {
  /** The service's environment for this server; filled in when the server has started. */
  readonly env: Record<string, string>
  /** Requests the server has received, as `METHOD url`. */
  readonly requests: Array<string>
}

/**
 * A local S3-compatible server (npm s3rver) on a free loopback port for the enclosing describe block,
 * with one bucket. Call it BEFORE useApp(handle.env): hooks run in order, so the environment object
 * is complete when the app starts.
 */
export const useS3Server = (bucket = "exports"): S3ServerHandle => {
  const handle: S3ServerHandle = { env: {}, requests: [] }
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "s3rver-"))
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  server.middleware.unshift(async (ctx, next) => {
    handle.requests.push(`${ctx.method} ${ctx.url}`)
    await next()
  })
  beforeAll(async () => {
    const { port } = await server.run()
    Object.assign(handle.env, {
      EXPORT_STORAGE: "s3",
      S3_BUCKET: bucket,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_REGION: "us-east-1",
      S3_FORCE_PATH_STYLE: "true",
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER"
    })
  })
  afterAll(async () => {
    await server.close()
    fs.rmSync(directory, { recursive: true, force: true })
  })
  return handle
}
