import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "vitest"
import { databaseFailureReason } from "../../src/platform/Database"

describe("databaseFailureReason", () => {
  it("words a connect timeout the same whether the driver's timer or ours fired first", () => {
    const ours = new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
    const drivers = new SqlError({ cause: new Error("Connection terminated due to connection timeout"), message: "PgClient: Failed to connect" })
    expect(databaseFailureReason(ours)).toBe("Connection timed out")
    expect(databaseFailureReason(drivers)).toBe("Connection timed out")
  })

  it("names the setting behind a pool or statement timeout, and keeps other causes with their code", () => {
    expect(databaseFailureReason(new SqlError({ cause: new Error("timeout exceeded when trying to connect") }))).toBe(
      "no connection within DATABASE_ACQUIRE_TIMEOUT_MS"
    )
    expect(databaseFailureReason(new SqlError({ cause: Object.assign(new Error("canceling statement"), { code: "57014" }) }))).toBe(
      "statement timeout (DATABASE_STATEMENT_TIMEOUT_MS)"
    )
    expect(databaseFailureReason(new SqlError({ cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) }))).toBe(
      "connect ECONNREFUSED 127.0.0.1:1"
    )
  })
})
