import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config"
import { ExportStorage } from "../exports/ExportStorage"
import { RateLimiter } from "../limits/RateLimiter"
import { UsageJournal } from "../usage/2-UsageJournal"

/** What /readyz says of each dependency in use. */
export type DependencyState = "up" | "down"

export interface DependencyReport {
  /** Every remote dependency in use beside PostgreSQL (which Readiness checks): redis, s3. */
  readonly states: Readonly<Record<string, DependencyState>>
  /** Whether the usage journal takes records; undefined when there is none (stores kept in memory). */
  readonly journal: "ok" | "failing" | undefined
  /** Why the service cannot work now: a dependency it needs is down. Undefined when all it needs is up. */
  readonly unready: string | undefined
}

interface Probe {
  readonly name: string
  /** Whether the service cannot do its work without it (then /readyz answers 503 while it is down). */
  readonly required: boolean
  /** What its absence means, in the 503's reason. */
  readonly consequence: string
  readonly reachable: Effect.Effect<void, unknown>
}

/**
 * The remote dependencies the configuration uses, asked together at each readiness check (each within
 * two seconds). Redis (RATE_LIMIT_STORE=redis) is needed only when rate limits fail closed
 * (RATE_LIMIT_ON_STORE_FAILURE=closed refuses every forwarded request without it); failing open, the
 * service keeps forwarding without limits, so Redis down is reported, not a 503. S3 (EXPORT_STORAGE=s3)
 * serves only exports: down, exports fail but forwarding and the rest work, so it is reported, not a 503.
 * The usage journal (local) is reported too; failing, it makes the service unready only with
 * USAGE_JOURNAL_REQUIRED=true, which then refuses every billable request.
 */
export class Dependencies extends Context.Tag("Dependencies")<Dependencies, {
  readonly check: Effect.Effect<DependencyReport>
}>() {
  static readonly layer = Layer.effect(
    Dependencies,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const storage = yield* ExportStorage
      const journal = yield* UsageJournal
      const { rateLimit, usageJournalRequired } = yield* AppConfig
      const probes: Array<Probe> = []
      if (limiter.reachable !== undefined) {
        probes.push({
          name: "redis",
          required: rateLimit.onStoreFailure === "closed",
          consequence: "rate limits fail closed (RATE_LIMIT_ON_STORE_FAILURE=closed): every forwarded request is refused",
          reachable: limiter.reachable
        })
      }
      if (storage.reachable !== undefined) {
        probes.push({ name: "s3", required: false, consequence: "exports fail", reachable: storage.reachable })
      }
      const ask = (probe: Probe) =>
        probe.reachable.pipe(
          Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "timeout" }),
          Effect.match({ onFailure: (): DependencyState => "down", onSuccess: (): DependencyState => "up" }),
          Effect.map((state) => ({ probe, state }))
        )
      return {
        check: Effect.map(Effect.all([Effect.forEach(probes, ask, { concurrency: "unbounded" }), journal.health]), ([answers, health]) => {
          const missing = answers.filter(({ probe, state }) => probe.required && state === "down").map(({ probe }) =>
            `${probe.name} unreachable: ${probe.consequence}`
          )
          if (health === "failing" && usageJournalRequired) {
            missing.push("usage journal cannot be written (USAGE_JOURNAL_REQUIRED=true): every billable request is refused")
          }
          return {
            states: Object.fromEntries(answers.map(({ probe, state }) => [probe.name, state])),
            journal: health === "absent" ? undefined : health,
            unready: missing.length === 0 ? undefined : missing.join("; ")
          }
        })
      }
    })
  )
}
