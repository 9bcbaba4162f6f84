import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { AuditLog } from "../../src/services/workspaces/AuditLog"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { auditLogContract } from "../contracts/auditLog"
import { databaseTimeout, MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/auditLog.ts on PostgreSQL; test/services/workspaces/auditLog.memory.test.ts runs it on the in-memory backing.
layer(AuditLog.layer.pipe(Layer.provideMerge(Workspaces.layer), Layer.provide(MigratedDatabase)), { excludeTestServices: true, timeout: databaseTimeout })(
  "AuditLog.layer keeps the contract",
  auditLogContract
)
