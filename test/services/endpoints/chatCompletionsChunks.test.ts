import { describe, expect, it } from "vitest"
import { withoutNullUsage, withoutUsage } from "../../../src/services/endpoints/ChatCompletions"

const chunk = (members: string) => `{"id":"c1","object":"chat.completion.chunk",${members}}`

describe("chunks for a client that did not ask for usage", () => {
  it("lose their usage member wherever it stands, and nothing else", () => {
    const choices = '"choices":[{"index":0,"delta":{"content":"say \\",\\"usage\\":null"},"finish_reason":null}]'
    expect(withoutNullUsage(chunk(`${choices},"usage":null`))).toBe(chunk(choices))
    expect(withoutNullUsage(chunk(`"usage":null,${choices}`))).toBe(chunk(choices))
    expect(withoutNullUsage(chunk(`${choices},"usage":null,"system_fingerprint":"fp"`))).toBe(chunk(`${choices},"system_fingerprint":"fp"`))
    expect(withoutNullUsage(chunk(choices))).toBe(chunk(choices))
    // A member whose name only starts like it stays.
    expect(withoutNullUsage(chunk(`${choices},"usage":nullish`))).toBe(chunk(`${choices},"usage":nullish`))
    for (const text of [chunk(`${choices},"usage":null`), chunk(`"usage":null,${choices}`)]) {
      expect(JSON.parse(withoutNullUsage(text))).not.toHaveProperty("usage")
    }
  })

  it("lose a trailing null usage, as most chunks end", () => {
    const choices = '"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]'
    expect(withoutUsage({ data: chunk(`${choices},"usage":null`) })).toEqual({ data: chunk(choices) })
    expect(withoutUsage({ event: "x", data: chunk(`"usage":null,${choices}`) })).toEqual({ event: "x", data: chunk(choices) })
  })

  it("drop the usage-only chunk and pass [DONE] and chunks without usage as they are", () => {
    expect(withoutUsage({ data: chunk('"choices":[],"usage":{"prompt_tokens":1}') })).toBeUndefined()
    expect(withoutUsage({ data: "[DONE]" })).toEqual({ data: "[DONE]" })
    const plain = { data: chunk('"choices":[]') }
    expect(withoutUsage(plain)).toBe(plain)
  })
})
