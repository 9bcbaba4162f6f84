import { Context, Effect, Layer, Runtime } from "effect"
import { AppConfig } from "../config"
import type { Problem } from "../domain/problem"
import { retryHeaders } from "../providers/rateLimitHeaders"

/** Client addresses remembered at most: beyond it the oldest are forgotten (a flood of addresses costs bounded memory). */
const maxAddresses = 100_000

/** A refusal of a throttled address: the endpoint renders it in its format, with these headers. */
export interface Throttled {
  readonly problem: Problem
  readonly headers: Readonly<Record<string, string>>
}

interface Window {
  startedAt: number
  failures: number
}

/**
 * Failed credentials (admin token, API keys) counted per client address in a fixed window: once an
 * address has AUTH_FAILURE_LIMIT failures in AUTH_FAILURE_WINDOW_SECONDS, its requests are answered
 * 429 before any key is looked up, until the window ends. The socket's address, never a forwarded
 * header (which the caller writes). Per instance, in memory: O(1) a request.
 */
export class CredentialThrottle extends Context.Tag("CredentialThrottle")<CredentialThrottle, {
  /** The refusal for an address that spent its failures, else undefined. */
  readonly check: (address: string | undefined) => Throttled | undefined
  /** Counts one failed credential of the address; logs once when the address trips. */
  readonly failed: (address: string | undefined) => void
}>() {
  static readonly layer = Layer.effect(
    CredentialThrottle,
    Effect.gen(function*() {
      const { authFailures } = yield* AppConfig
      const windowMs = authFailures.windowSeconds * 1_000
      const windows = new Map<string, Window>()
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const current = (address: string, now: number): Window | undefined => {
        const window = windows.get(address)
        if (window !== undefined && now - window.startedAt >= windowMs) {
          windows.delete(address)
          return undefined
        }
        return window
      }
      return {
        check: (address) => {
          if (address === undefined) return undefined
          const now = Date.now()
          const window = current(address, now)
          if (window === undefined || window.failures < authFailures.limit) return undefined
          const waitMs = window.startedAt + windowMs - now
          return {
            problem: {
              status: 429,
              code: "too_many_failed_credentials",
              message: `Too many failed credentials from this address. Retry in ${Math.ceil(waitMs / 1_000)} s.`
            },
            headers: retryHeaders(waitMs)
          }
        },
        failed: (address) => {
          if (address === undefined) return
          const now = Date.now()
          let window = current(address, now)
          if (window === undefined) {
            if (windows.size >= maxAddresses) {
              const oldest = windows.keys().next()
              if (oldest.done !== true) windows.delete(oldest.value)
            }
            window = { startedAt: now, failures: 0 }
            windows.set(address, window)
          }
          window.failures += 1
          if (window.failures === authFailures.limit) {
            runFork(
              Effect.logWarning("failed credentials throttled").pipe(
                Effect.annotateLogs({ address, failures: window.failures, windowSeconds: authFailures.windowSeconds })
              )
            )
          }
        }
      }
    })
  )
}
