import { layer } from "@effect/vitest"
import { Layer } from "effect"
import { AuditLog } from "../../../src/services/workspaces/AuditLog"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { auditLogContract } from "../../contracts/auditLog"

// The contract of test/contracts/auditLog.ts on the in-memory backing; test/integration/auditLog.pg.test.ts runs it on PostgreSQL.
layer(AuditLog.memory.pipe(Layer.provideMerge(Workspaces.memory)), { excludeTestServices: true })("AuditLog.memory keeps the contract", auditLogContract)
