// Per-request simulation controls: latency, chunking, output length and injected faults.
// They come from `x-simulator-*` request headers or, so that they survive a gateway that forwards only the
// body, from a directive anywhere in the request text: `[simulator fault=rate_limit fault_times=2]`.
import { Either, Schema } from "effect"
import { hexDigest } from "./deterministic"
import type { SimulatorSettingsShape } from "./settings"

export const FaultKind = Schema.Literal(
  "rate_limit", // 429 with retry hints
  "overloaded", // 503 (provider_b: 529)
  "server_error", // 500
  "unauthorized", // 401
  "content_filter", // 400 with code content_filter: the prompt refused by a content filter (the azure kind's refusal)
  "bad_gateway", // 502 with an HTML page, as a proxy in front of the provider answers
  "malformed_body", // 200 whose body is not valid JSON / SSE
  "ignore_stream", // a stream asked for, a 200 JSON answer given (a server that ignores `stream`)
  "html_page", // 200 with an HTML page, as a proxy's sign-in or error page
  "gzip", // the answer gzip-encoded, though the request did not ask for it
  "reset", // connection dropped before any byte
  "cut_after_headers", // status and headers, then the connection drops before any byte of the body
  "hang", // nothing is ever sent
  "mid_stream_error", // the format's in-band error event after `fault_after` events, then the connection drops
  "mid_stream_abort", // the connection drops after `fault_after` events
  "mid_event_abort", // the connection drops in the middle of the event after `fault_after` events
  "stall" // `fault_after` events, then silence with the connection open
)
export type FaultKind = typeof FaultKind.Type

export interface SimulationControls {
  readonly latencyMs: number
  readonly chunkDelayMs: number
  readonly chunkTokens: number
  readonly retryAfterMs: number
  /** Exact length of generated text in tokens (still cut by max_tokens and stop sequences). */
  readonly outputTokens: number | undefined
  /** "echo" answers with the last user text instead of generated text. */
  readonly reply: "generate" | "echo"
  readonly fault: FaultKind | undefined
  /** Answer with the protocol's error body at this status (any 4xx or 5xx), instead of a fault kind. */
  readonly status: number | undefined
  /** Stream events delivered before a mid-stream fault. */
  readonly faultAfter: number
  /** How many attempts of the same request fail before it succeeds; undefined: every attempt. */
  readonly faultTimes: number | undefined
  /** Requests sharing a key share the fault_times count; defaults to a digest of path and body. */
  readonly faultKey: string
  /**
   * The start of the SHA-256 (hex) of the only credential this request may carry: a test that knows which key
   * a request must go upstream with says so in the prompt, without the key itself being in it.
   */
  readonly expectKey: string | undefined
}

const directiveRegex = /\[simulator((?:\s+[a-z_]+=[^\s\]]+)+)\s*\]/

const controlNames = [
  "latency_ms",
  "chunk_delay_ms",
  "chunk_tokens",
  "retry_after_ms",
  "output_tokens",
  "reply",
  "fault",
  "status",
  "fault_after",
  "fault_times",
  "fault_key",
  "expect_key"
] as const
type ControlName = (typeof controlNames)[number]

const isControlName = (name: string): name is ControlName => (controlNames as ReadonlyArray<string>).includes(name)

/** Raw control values: the body directive first, headers override it. */
const collectRaw = (
  header: (name: string) => string | undefined,
  rawBody: string
): Either.Either<Map<ControlName, string>, string> => {
  const raw = new Map<ControlName, string>()
  const directive = directiveRegex.exec(rawBody)?.[1]
  for (const assignment of directive?.trim().split(/\s+/) ?? []) {
    const [name = "", value = ""] = assignment.split("=", 2)
    if (!isControlName(name)) return Either.left(`unknown simulator control '${name}'`)
    raw.set(name, value)
  }
  for (const name of controlNames) {
    const value = header(`x-simulator-${name.replace(/_/g, "-")}`)
    if (value !== undefined) raw.set(name, value)
  }
  return Either.right(raw)
}

const integerAtLeast = (minimum: number) => (name: string, value: string): Either.Either<number, string> => {
  const parsed = Number(value)
  return Number.isInteger(parsed) && parsed >= minimum
    ? Either.right(parsed)
    : Either.left(`simulator control '${name}' must be an integer >= ${minimum}, got '${value}'`)
}

const optionalStatus = (value: string | undefined): Either.Either<number | undefined, string> => {
  if (value === undefined) return Either.right(undefined)
  const status = Number(value)
  return Number.isInteger(status) && status >= 400 && status <= 599
    ? Either.right(status)
    : Either.left(`simulator control 'status' must be an HTTP status from 400 to 599, got '${value}'`)
}

/** Reads the controls of one request, or explains which control value is wrong. */
export const readControls = (
  settings: SimulatorSettingsShape,
  request: { readonly path: string; readonly header: (name: string) => string | undefined; readonly rawBody: string }
): Either.Either<SimulationControls, string> =>
  Either.gen(function* () {
    const raw = yield* collectRaw(request.header, request.rawBody)
    const number = (name: ControlName, minimum: number, fallback: number) => {
      const value = raw.get(name)
      return value === undefined ? Either.right(fallback) : integerAtLeast(minimum)(name, value)
    }
    const optionalNumber = (name: ControlName, minimum: number) => {
      const value = raw.get(name)
      return value === undefined ? Either.right(undefined) : integerAtLeast(minimum)(name, value)
    }
    const faultValue = raw.get("fault")
    const fault =
      faultValue === undefined
        ? undefined
        : yield* Schema.decodeUnknownEither(FaultKind)(faultValue).pipe(
            Either.mapLeft(() => `simulator control 'fault' must be one of ${FaultKind.literals.join(", ")}, got '${faultValue}'`)
          )
    const replyValue = raw.get("reply") ?? "generate"
    if (replyValue !== "generate" && replyValue !== "echo") {
      return yield* Either.left(`simulator control 'reply' must be generate or echo, got '${replyValue}'`)
    }
    const expectKey = raw.get("expect_key")
    if (expectKey !== undefined && !/^[0-9a-f]{16,64}$/.test(expectKey)) {
      return yield* Either.left(`simulator control 'expect_key' must be 16 to 64 hex characters of a key's SHA-256, got '${expectKey}'`)
    }
    return {
      expectKey,
      latencyMs: yield* number("latency_ms", 0, settings.latencyMs),
      chunkDelayMs: yield* number("chunk_delay_ms", 0, settings.chunkDelayMs),
      chunkTokens: yield* number("chunk_tokens", 1, settings.chunkTokens),
      retryAfterMs: yield* number("retry_after_ms", 0, settings.retryAfterMs),
      outputTokens: yield* optionalNumber("output_tokens", 0),
      reply: replyValue,
      fault,
      status: yield* optionalStatus(raw.get("status")),
      faultAfter: yield* number("fault_after", 0, 2),
      faultTimes: yield* optionalNumber("fault_times", 0),
      // Hashing the body costs time on every request; only fault counting needs the key.
      faultKey: raw.get("fault_key") ??
        (fault === undefined && raw.get("status") === undefined ? "" : hexDigest([request.path, request.rawBody], 32))
    }
  })
