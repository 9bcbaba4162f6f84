import { Layer } from "effect"
import { WebhookStore } from "../../src/services/webhooks/WebhookStore/index"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { webhookStoreContract } from "../contracts/webhookStore"
import { MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/webhookStore.ts on PostgreSQL (a migrated database of its own per case);
// test/services/webhooks/webhookStore.memory.test.ts runs it on the in-memory backing.
webhookStoreContract("PostgreSQL", Layer.merge(WebhookStore.layer, Workspaces.layer).pipe(Layer.provide(MigratedDatabase)))
