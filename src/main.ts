import { NodeRuntime } from "@effect/platform-node"
import { Console, Context, Effect, Layer, Logger, Option, Ref } from "effect"
import { AppLive } from "./appLayer"
import { AppConfig, type AppConfigShape, describeConfigError } from "./config"
import { JsonLogger, PrettyLogger } from "./logger"
import { DatabaseHealth } from "./services/Database"
import { describeFailure, preflight } from "./startup"

/** The signal that asked the service to stop, for its "shutting down" line. */
const signalReceived = Effect.sync(() => {
  const received: { signal?: NodeJS.Signals } = {}
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void (received.signal ??= signal))
  return received
})

/**
 * Serves until SIGINT or SIGTERM (exit status 0), or until the embedded PostgreSQL dies (status 1,
 * so that a supervisor starts the service again).
 */
const serve = (config: AppConfigShape) =>
  Effect.gen(function*() {
    yield* preflight(config)
    const received = yield* signalReceived
    const started = yield* Ref.make(false)
    // Registered first, so it runs last: after every layer was released.
    yield* Effect.addFinalizer(() => Effect.flatMap(Ref.get(started), (was) => was ? Effect.logInfo("stopped") : Effect.void))
    const context = yield* Layer.build(AppLive)
    yield* Ref.set(started, true)
    yield* Effect.addFinalizer(() =>
      Effect.logInfo("shutting down").pipe(Effect.annotateLogs(received.signal === undefined ? {} : { signal: received.signal }))
    )
    return yield* Context.get(context, DatabaseHealth).lost
  }).pipe(
    Effect.scoped,
    Effect.provideService(AppConfig, config),
    // Every failure is one plain line on stderr (the log may be JSON; this line is for a person).
    Effect.tapErrorCause((cause) => Option.match(describeFailure(cause, config), { onNone: () => Effect.void, onSome: Console.error })),
    Logger.withMinimumLogLevel(config.logLevel),
    Effect.provide(config.logFormat === "pretty" ? PrettyLogger : JsonLogger)
  )

/** Reads the configuration (a bad setting is one plain line) and serves. Both failures exit 1. */
const main = AppConfig.pipe(
  Effect.provide(AppConfig.layer),
  Effect.tapError((error) => Console.error(describeConfigError(error))),
  Effect.flatMap(serve)
)

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
