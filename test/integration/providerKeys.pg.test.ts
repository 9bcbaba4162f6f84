import { Layer } from "effect"
import { ProviderKeys } from "../../src/services/providerKeys/ProviderKeys"
import { Workspaces } from "../../src/services/workspaces/Workspaces"
import { providerKeysContract } from "../contracts/providerKeys"
import { MigratedDatabase } from "../support/migratedDatabase"

// The contract of test/contracts/providerKeys.ts on PostgreSQL (a migrated database of its own per case);
// test/services/providerKeys/providerKeys.memory.test.ts runs it on the in-memory backing.
providerKeysContract("PostgreSQL", Layer.merge(ProviderKeys.layer, Workspaces.layer).pipe(Layer.provide(MigratedDatabase)))
