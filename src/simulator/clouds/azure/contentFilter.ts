// The content filter's verdicts the azure kind adds to chat answers: on the prompt (`prompt_filter_results`,
// in a stream a chunk of its own with empty `choices`, first) and on each choice (`content_filter_results`).
import { Either } from "effect"
import { dataEvent } from "../../../domain/sse"
import type { Reply } from "../../endpoint"

const safe = { filtered: false, severity: "safe" }

/** What a choice's text was found to be: nothing to filter, as the simulated model writes. */
export const choiceResults = { hate: safe, self_harm: safe, sexual: safe, violence: safe }

/** The prompt's verdict: nothing filtered, no jailbreak. */
export const promptResults = [
  { prompt_index: 0, content_filter_results: { ...choiceResults, jailbreak: { filtered: false, detected: false } } }
]

/** The verdict inside a content-filter refusal: one category filtered. */
export const refusedPromptResults = {
  ...choiceResults,
  jailbreak: { filtered: false, detected: false },
  violence: { filtered: true, severity: "high" }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const withChoiceResults = (choices: unknown, results: (choice: Record<string, unknown>) => unknown): unknown =>
  Array.isArray(choices) ? choices.map((choice) => (isRecord(choice) ? { ...choice, content_filter_results: results(choice) } : choice)) : choices

/** The stream's first chunk: no choices, the prompt's verdict, and empty id, model and object as the cloud sends it. */
export const promptFilterChunk = dataEvent({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: promptResults })

/** A chunk's choices with their verdicts: the full one on text, an empty one on role and finish chunks. */
const filteredChunk = (event: string): string => {
  if (!event.startsWith("data: {")) return event
  const chunk = Either.getOrUndefined(Either.try(() => JSON.parse(event.slice("data: ".length)) as unknown))
  if (!isRecord(chunk) || !Array.isArray(chunk.choices) || chunk.choices.length === 0) return event
  return dataEvent({
    ...chunk,
    choices: withChoiceResults(chunk.choices, (choice) =>
      isRecord(choice.delta) && typeof choice.delta.content === "string" && choice.delta.content !== "" ? choiceResults : {})
  })
}

/** A chat answer as the cloud gives it: the verdicts added, to the JSON answer or to the stream. */
export const withFilterResults = (reply: Reply): Reply => {
  if (reply._tag === "Events") return { _tag: "Events", events: [promptFilterChunk, ...reply.events.map(filteredChunk)] }
  if (!isRecord(reply.body)) return reply
  return {
    _tag: "Json",
    body: { ...reply.body, prompt_filter_results: promptResults, choices: withChoiceResults(reply.body.choices, () => choiceResults) }
  }
}
