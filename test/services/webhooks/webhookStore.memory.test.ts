import { Layer } from "effect"
import { WebhookStore } from "../../../src/services/webhooks/WebhookStore/index"
import { Workspaces } from "../../../src/services/workspaces/Workspaces"
import { webhookStoreContract } from "../../contracts/webhookStore"

webhookStoreContract("memory", Layer.merge(WebhookStore.memory, Workspaces.memory))
