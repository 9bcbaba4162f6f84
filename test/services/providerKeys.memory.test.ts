import { Layer } from "effect"
import { ProviderKeys } from "../../src/services/ProviderKeys"
import { Workspaces } from "../../src/services/Workspaces"
import { providerKeysContract } from "../contracts/providerKeys"

providerKeysContract("memory", Layer.merge(ProviderKeys.memory, Workspaces.memory))
