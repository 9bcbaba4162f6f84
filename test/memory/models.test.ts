import ProviderBClient from "@anthropic-ai/sdk"
import { Mistral as ProviderCClient } from "@mistralai/mistralai"
import ProviderAClient from "openai"
import { beforeAll, describe, expect, it } from "vitest"
import { builtInCatalog, DEFAULT_FIM_MODEL } from "../../src/domain/models"
import { useApp, call, createKey, createWorkspace } from "../support/app"

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)
const user = (content: string) => [{ role: "user" as const, content }]

const chatModels = builtInCatalog.ids("provider_a", "chat_completions")
const embeddingModels = builtInCatalog.ids("provider_a", "embeddings")
const messagesModels = builtInCatalog.ids("provider_b", "messages")

/** A workspace's own model lists (it brings its own keys): one catalog model and one the catalog does not know. */
const byokModels = {
  provider_a: ["chatgen-4o", "chatgen-own-finetune"],
  provider_b: ["assistantmodel-3-5-sonnet-20240620", "assistantmodel-own-1"]
}

// The models lists through the official client libraries on the in-memory app: each provider's own list
// format, what the calling key's workspace may use (the catalog, or its own lists), and the one model by id.
describe("models lists", () => {
  const app = useApp()
  let key = ""
  let ownKey = ""

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    key = (await createKey(app.current, workspace.id, ["COMPLETION_API"])).key
    const own = await createWorkspace(app.current, "Own keys", { byokModels })
    ownKey = (await createKey(app.current, own.id, ["COMPLETION_API"])).key
  })

  const providerA = (apiKey: string, region = "eu") =>
    new ProviderAClient({ apiKey, baseURL: `${app.current.url}/provider_a/${region}/v1`, maxRetries: 0 })
  const providerB = (apiKey: string, region = "eu") =>
    new ProviderBClient({ apiKey, baseURL: `${app.current.url}/provider_b/${region}`, maxRetries: 0 })
  const providerC = (apiKey: string) => new ProviderCClient({ apiKey, serverURL: `${app.current.url}/provider_c/eu` })

  describe("provider_a (openai library)", () => {
    it("lists the catalog's chat and embedding models, and retrieves one", async () => {
      const client = providerA(key)
      const listed = []
      for await (const model of client.models.list()) listed.push(model)
      expect(listed.map((model) => model.id)).toEqual([...chatModels, ...embeddingModels])
      for (const model of listed) {
        expect(model).toEqual({ id: model.id, object: "model", created: expect.any(Number), owned_by: "provider_a" })
      }
      const one = await client.models.retrieve("chatgen-4.1-mini")
      expect(one).toMatchObject({ id: "chatgen-4.1-mini", object: "model" })
    })

    it("a workspace with its own list: that list (and the embedding model, which is not the workspace's to choose)", async () => {
      const page = await providerA(ownKey).models.list()
      expect(page.data.map((model) => model.id)).toEqual([...byokModels.provider_a, ...embeddingModels])
      // The list and what the endpoints accept agree: a listed model is served, an unlisted catalog model is refused.
      const completion = await providerA(ownKey).chat.completions.create({ model: "chatgen-4o", messages: user("Hi") })
      expect(completion.model).toBe("chatgen-4o")
      const refused = await failureOf(providerA(ownKey).chat.completions.create({ model: "chatgen-4o-mini", messages: user("Hi") }))
      expect(refused).toBeInstanceOf(ProviderAClient.NotFoundError)
      expect((await providerA(ownKey).models.retrieve("chatgen-own-finetune")).id).toBe("chatgen-own-finetune")
      expect(await failureOf(providerA(ownKey).models.retrieve("chatgen-4o-mini"))).toBeInstanceOf(ProviderAClient.NotFoundError)
    })

    it("an unknown model: 404 in the chat-completions format, naming the list; the forwarded endpoint's refusal too", async () => {
      const missing = await failureOf(providerA(key, "us").models.retrieve("chatgen-0"))
      expect(missing).toBeInstanceOf(ProviderAClient.NotFoundError)
      const error = missing as InstanceType<typeof ProviderAClient.NotFoundError>
      expect(error.code).toBe("model_not_found")
      expect(error.message).toContain("The models this workspace may use are listed at GET /provider_a/us/v1/models.")

      const forwarded = await failureOf(providerA(key, "us").chat.completions.create({ model: "chatgen-0", messages: user("Hi") }))
      expect(forwarded).toBeInstanceOf(ProviderAClient.NotFoundError)
      expect((forwarded as Error).message).toMatch(
        /^404 The model 'chatgen-0' does not exist or you do not have access to it\. The models this workspace may use are listed at GET \/provider_a\/us\/v1\/models\.$/
      )
      const embedding = await failureOf(providerA(key).embeddings.create({ model: "chatgen-0", input: "x" }))
      expect((embedding as Error).message).toContain("listed at GET /provider_a/eu/v1/models.")
    })

    it("401 in the chat-completions format without a valid key; 404 for a region not served", async () => {
      const denied = await failureOf(providerA("wsk_" + "x".repeat(43)).models.list())
      expect(denied).toBeInstanceOf(ProviderAClient.AuthenticationError)
      // Without a key: the same 401 body as the forwarded endpoints answer.
      const unscoped = await call(app.current, "GET", "/provider_a/eu/v1/models")
      const forwarded = await call(app.current, "POST", "/provider_a/eu/v1/chat/completions", { body: { model: "chatgen-4o", messages: user("Hi") } })
      expect(unscoped.status).toBe(401)
      expect(forwarded.status).toBe(401)
      expect(unscoped.body).toEqual(forwarded.body)
      expect(unscoped.body).toMatchObject({ error: { code: "invalid_api_key" } })
      const region = await failureOf(providerA(key, "mars").models.list())
      expect(region).toBeInstanceOf(ProviderAClient.NotFoundError)
      expect((region as InstanceType<typeof ProviderAClient.NotFoundError>).param).toBe("region")
    })
  })

  describe("provider_b (@anthropic-ai/sdk)", () => {
    it("lists the catalog's models with every field of a model object, and retrieves one", async () => {
      const client = providerB(key)
      const listed = []
      for await (const model of client.models.list()) listed.push(model)
      expect(listed.map((model) => model.id)).toEqual(messagesModels)
      expect(listed[0]).toEqual({
        id: "assistantmodel-sonnet-4-5-20250929",
        type: "model",
        display_name: "assistantmodel-sonnet-4-5-20250929",
        created_at: "2025-09-29T00:00:00.000Z",
        max_input_tokens: 200_000,
        max_tokens: 64_000,
        lifecycle: "active",
        deprecated_at: null,
        retires_at: null,
        line: null,
        capabilities: null
      })
      const one = await client.models.retrieve("assistantmodel-3-7-sonnet-20250219")
      expect(one).toMatchObject({ id: "assistantmodel-3-7-sonnet-20250219", type: "model", max_tokens: 64_000 })
    })

    it("pages with limit, after_id and before_id; the library follows has_more to the end", async () => {
      const client = providerB(key)
      const first = await client.models.list({ limit: 1 })
      expect(first.data.map((model) => model.id)).toEqual(messagesModels.slice(0, 1))
      expect(first).toMatchObject({ has_more: true, first_id: messagesModels[0], last_id: messagesModels[0] })
      const paged = []
      for await (const model of client.models.list({ limit: 1 })) paged.push(model.id)
      expect(paged).toEqual(messagesModels)
      const after = await client.models.list({ limit: 2, after_id: messagesModels[1]! })
      expect(after.data.map((model) => model.id)).toEqual(messagesModels.slice(2, 4))
      expect(after.has_more).toBe(false)
      const before = await client.models.list({ limit: 1, before_id: messagesModels[2]! })
      expect(before.data.map((model) => model.id)).toEqual([messagesModels[1]])
      expect(before.has_more).toBe(true)
      const empty = await client.models.list({ after_id: messagesModels[3]! })
      expect(empty).toMatchObject({ data: [], has_more: false, first_id: null, last_id: null })
    })

    it("refuses a bad page query in the messages format", async () => {
      const client = providerB(key)
      const tooMany = await failureOf(client.models.list({ limit: 1001 }))
      expect(tooMany).toBeInstanceOf(ProviderBClient.BadRequestError)
      expect((tooMany as Error).message).toContain("limit")
      const unknown = await failureOf(client.models.list({ after_id: "assistantmodel-0" }))
      expect(unknown).toBeInstanceOf(ProviderBClient.BadRequestError)
      expect((unknown as Error).message).toContain("after_id: 'assistantmodel-0' is not a model of this list.")
    })

    it("a workspace with its own list: that list; the forwarded refusal of another model names the list", async () => {
      const page = await providerB(ownKey, "us").models.list()
      expect(page.data.map((model) => model.id)).toEqual(byokModels.provider_b)
      // A model the catalog does not know: no figures to show.
      expect(page.data[1]).toMatchObject({ id: "assistantmodel-own-1", max_input_tokens: null, max_tokens: null })
      const refused = await failureOf(
        providerB(ownKey, "us").messages.create({ model: messagesModels[0]!, max_tokens: 10, messages: user("Hi") })
      )
      expect(refused).toBeInstanceOf(ProviderBClient.NotFoundError)
      const error = refused as InstanceType<typeof ProviderBClient.NotFoundError>
      expect(error.error).toMatchObject({
        type: "error",
        error: {
          type: "not_found_error",
          message:
            `model: ${messagesModels[0]} does not exist or you do not have access to it. The models this workspace may use are listed at GET /provider_b/us/v1/models.`
        }
      })
      expect(await failureOf(providerB(ownKey).models.retrieve(messagesModels[0]!))).toBeInstanceOf(ProviderBClient.NotFoundError)
    })

    it("401 in the messages format without a valid key", async () => {
      const denied = await failureOf(providerB("wsk_" + "x".repeat(43)).models.list())
      expect(denied).toBeInstanceOf(ProviderBClient.AuthenticationError)
      expect((denied as InstanceType<typeof ProviderBClient.AuthenticationError>).error).toMatchObject({
        type: "error",
        error: { type: "authentication_error" }
      })
    })
  })

  describe("provider_c (@mistralai/mistralai)", () => {
    it("lists and retrieves the FIM model as base model cards the client validates", async () => {
      const client = providerC(key)
      const list = await client.models.list()
      expect(list.data?.map((model) => ("id" in model ? model.id : model.type))).toEqual([DEFAULT_FIM_MODEL])
      const card = await client.models.retrieve({ modelId: DEFAULT_FIM_MODEL })
      expect(card).toMatchObject({
        id: DEFAULT_FIM_MODEL,
        type: "base",
        ownedBy: "provider_c",
        maxContextLength: 256_000,
        capabilities: { completionFim: true, completionChat: false }
      })
    })

    it("an unknown model: 404 naming the list; the FIM endpoint's refusal names it too; 401 without a key", async () => {
      const client = providerC(key)
      const missing = await failureOf(client.models.retrieve({ modelId: "codemodel-0" }))
      expect((missing as { statusCode?: number }).statusCode).toBe(404)
      expect((missing as Error).message).toContain("listed at GET /provider_c/eu/v1/models.")
      const fim = await failureOf(client.fim.complete({ model: "codemodel-0", prompt: "def f(" }))
      expect((fim as { statusCode?: number }).statusCode).toBe(400)
      expect((fim as Error).message).toContain("listed at GET /provider_c/eu/v1/models.")
      const denied = await failureOf(providerC("wsk_" + "x".repeat(43)).models.list())
      expect((denied as { statusCode?: number }).statusCode).toBe(401)
    })
  })
})

describe("models lists in the OpenAPI document", () => {
  const app = useApp()

  it("declares the lists and the token count, with a summary", async () => {
    const spec = await call(app.current, "GET", "/openapi.json")
    expect(spec.status).toBe(200)
    for (const provider of ["provider_a", "provider_b", "provider_c"]) {
      expect(spec.body.paths[`/${provider}/{region}/v1/models`].get.summary).toBe("List the models this workspace may use")
      expect(spec.body.paths[`/${provider}/{region}/v1/models/{model}`].get.summary).toBe("Retrieve a model this workspace may use")
    }
    expect(Object.keys(spec.body.paths)).toContain("/provider_b/{region}/v1/messages/count_tokens")
  })
})

describe("models lists under BASE_PATH", () => {
  const app = useApp({ BASE_PATH: "/api/public" })

  it("the refusal names the list under BASE_PATH, where the list is served", async () => {
    const workspace = await createWorkspace(app.current)
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    const client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
    const refused = await failureOf(client.chat.completions.create({ model: "chatgen-0", messages: user("Hi") }))
    expect((refused as Error).message).toContain("listed at GET /api/public/provider_a/eu/v1/models.")
    expect((await client.models.list()).data.length).toBe(chatModels.length + embeddingModels.length)
  })
})
