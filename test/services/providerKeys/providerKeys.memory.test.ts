import { Layer } from "effect"
import { ProviderKeys } from "../../../src/services/providerKeys/ProviderKeys"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { providerKeysContract } from "../../contracts/providerKeys"

providerKeysContract("memory", Layer.merge(ProviderKeys.memory, Workspaces.memory))
