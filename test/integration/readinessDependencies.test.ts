import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import S3rver from "s3rver"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/fakeUpstream"
import { type RedisServer, startRedis } from "../support/redis"
import { call, type RunningApp, startApp } from "../support/app"

/** A local S3-compatible server that the test can stop, unlike useS3Server's (which lives for the whole block). */
const startS3 = async () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "s3rver-ready-"))
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: "exports" }] })
  const { port } = await server.run()
  let running = true
  return {
    env: {
      EXPORT_STORAGE: "s3",
      S3_BUCKET: "exports",
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_REGION: "us-east-1",
      S3_FORCE_PATH_STYLE: "true",
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER"
    },
    stop: async () => {
      if (running) await server.close()
      running = false
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }
}

const readyz = (app: RunningApp) => call(app, "GET", "/readyz")

describe("/readyz with Redis failing closed and S3, both real", () => {
  let redis: RedisServer
  let s3: Awaited<ReturnType<typeof startS3>>
  let app: RunningApp

  beforeAll(async () => {
    redis = await startRedis()
    s3 = await startS3()
    app = await startApp({ ...s3.env, RATE_LIMIT_STORE: "redis", REDIS_URL: redis.url, RATE_LIMIT_ON_STORE_FAILURE: "closed" }, { stores: "postgres" })
  })
  afterAll(async () => {
    await app?.stop()
    await s3?.stop()
    await redis?.stop()
  })

  it("names each dependency in use, all up", async () => {
    const ready = await readyz(app)
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: "ready", dependencies: { postgresql: "up", redis: "up", s3: "up" } })
  })

  it("stays ready with S3 down (only exports need it), and says so", async () => {
    await s3.stop()
    const ready = await readyz(app)
    expect(ready.status).toBe(200)
    expect(ready.body.dependencies).toEqual({ postgresql: "up", redis: "up", s3: "down" })
  })

  it("answers 503 while Redis is down, as rate limits fail closed, and ready again once it is back", async () => {
    await redis.stop()
    const down = await eventually(() => readyz(app), (answer) => answer.status === 503)
    expect(down.body).toEqual({ status: "unavailable", reason: expect.stringContaining("redis unreachable"), journal: "ok" })
    await redis.start()
    const back = await eventually(() => readyz(app), (answer) => answer.status === 200, 15_000)
    expect(back.body.dependencies.redis).toBe("up")
  })
})

describe("/readyz with Redis failing open", () => {
  let redis: RedisServer
  let app: RunningApp

  beforeAll(async () => {
    redis = await startRedis()
    app = await startApp({ RATE_LIMIT_STORE: "redis", REDIS_URL: redis.url }, { stores: "postgres" })
  })
  afterAll(async () => {
    await app?.stop()
    await redis?.stop()
  })

  it("stays ready with Redis down (requests go on without limits), and says Redis is down", async () => {
    expect((await readyz(app)).body.dependencies).toEqual({ postgresql: "up", redis: "up" })
    await redis.stop()
    const ready = await eventually(() => readyz(app), (answer) => answer.body.dependencies?.redis === "down")
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: "ready", dependencies: { postgresql: "up", redis: "down" } })
  })
})

describe("/readyz with neither", () => {
  let app: RunningApp
  beforeAll(async () => {
    app = await startApp({}, { stores: "postgres" })
  })
  afterAll(() => app?.stop())

  it("names PostgreSQL only", async () => {
    expect((await readyz(app)).body).toMatchObject({ status: "ready", dependencies: { postgresql: "up" } })
    expect(Object.keys((await readyz(app)).body.dependencies)).toEqual(["postgresql"])
  })
})
