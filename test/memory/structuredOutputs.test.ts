import ProviderAClient from "openai"
import { zodResponseFormat } from "openai/helpers/zod"
import { beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { useApp, createKey, createWorkspace } from "../support/app"

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error)

const Forecast = z.object({
  city: z.string(),
  temperature: z.number().min(-40).max(45),
  conditions: z.enum(["sunny", "cloudy", "rainy"]),
  hourly: z.array(z.object({ hour: z.number().int().min(0).max(23), rainChance: z.number().min(0).max(1) }))
})

const ask = [{ role: "user" as const, content: "The forecast for Lyon tomorrow, please." }]

// Structured outputs through the openai library's own helpers (chat.completions.parse with a zod schema),
// on the in-memory app with the built-in simulator upstream: the answer must parse against the schema.
describe("structured outputs (response_format json_schema)", () => {
  const app = useApp()
  let client: ProviderAClient

  beforeAll(async () => {
    const workspace = await createWorkspace(app.current)
    const { key } = await createKey(app.current, workspace.id, ["COMPLETION_API"])
    client = new ProviderAClient({ apiKey: key, baseURL: `${app.current.url}/provider_a/eu/v1`, maxRetries: 0 })
  })

  it("chat.completions.parse gives message.parsed matching the schema, the same for the same request", async () => {
    const request = { model: "chatgen-4o-mini", messages: ask, response_format: zodResponseFormat(Forecast, "forecast") }
    const completion = await client.chat.completions.parse(request)
    const message = completion.choices[0]!.message
    expect(completion.choices[0]!.finish_reason).toBe("stop")
    expect(message.parsed).not.toBeNull()
    // The library parsed it with the schema; parsing again here makes the check independent of it.
    expect(Forecast.parse(JSON.parse(message.content!))).toEqual(message.parsed)
    const again = await client.chat.completions.parse(request)
    expect(again.choices[0]!.message.content).toBe(message.content)
  })

  it("streamed: the library's stream helper parses the final message", async () => {
    const stream = client.chat.completions.stream({
      model: "chatgen-4o-mini",
      messages: ask,
      response_format: zodResponseFormat(Forecast, "forecast")
    })
    let chunks = 0
    for await (const _chunk of stream) chunks++
    const final = await stream.finalChatCompletion()
    expect(chunks).toBeGreaterThan(1)
    expect(Forecast.parse(final.choices[0]!.message.parsed)).toEqual(final.choices[0]!.message.parsed)
  })

  it("a plain json_schema response_format is forwarded and answered with JSON of that schema", async () => {
    const completion = await client.chat.completions.create({
      model: "chatgen-4o-mini",
      messages: ask,
      response_format: {
        type: "json_schema",
        json_schema: {
          name: "answer",
          description: "One word and a count",
          strict: true,
          schema: {
            type: "object",
            properties: { word: { type: "string", enum: ["yes", "no"] }, count: { type: "integer", minimum: 3, maximum: 3 } },
            required: ["word", "count"],
            additionalProperties: false
          }
        }
      }
    })
    const answer = JSON.parse(completion.choices[0]!.message.content!) as { word: string; count: number }
    expect(["yes", "no"]).toContain(answer.word)
    expect(answer.count).toBe(3)
  })

  const refusals: ReadonlyArray<{ readonly name: string; readonly format: unknown; readonly param: string; readonly message: RegExp }> = [
    { name: "a name with a space", format: { type: "json_schema", json_schema: { name: "my answer" } }, param: "response_format.json_schema.name", message: /1 to 64 letters/ },
    { name: "a name of 65 characters", format: { type: "json_schema", json_schema: { name: "a".repeat(65) } }, param: "response_format.json_schema.name", message: /1 to 64 letters/ },
    { name: "no json_schema", format: { type: "json_schema" }, param: "response_format.json_schema", message: /required/ },
    { name: "a schema that is an array", format: { type: "json_schema", json_schema: { name: "a", schema: [] } }, param: "response_format.json_schema.schema", message: /must be a JSON object/ },
    { name: "strict as a string", format: { type: "json_schema", json_schema: { name: "a", strict: "true" } }, param: "response_format.json_schema.strict", message: /must be a boolean/ },
    { name: "an unknown type", format: { type: "xml" }, param: "response_format.type", message: /'text', 'json_object' or 'json_schema'/ }
  ]

  it.each(refusals)("refuses $name with a 400 naming the field", async ({ format, message, param }) => {
    const error = await failureOf(client.chat.completions.create({
      model: "chatgen-4o-mini",
      messages: ask,
      // Deliberately malformed: the library would not let it through its types.
      response_format: format as { type: "text" }
    }))
    expect(error).toBeInstanceOf(ProviderAClient.BadRequestError)
    const refused = error as InstanceType<typeof ProviderAClient.BadRequestError>
    expect(refused.status).toBe(400)
    expect(refused.param).toBe(param)
    expect(refused.message).toMatch(message)
  })
})
