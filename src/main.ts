import { NodeRuntime } from "@effect/platform-node"
import { Console, Context, Effect, Layer, Logger, Option, Ref, Runtime } from "effect"
import { AppLive } from "./appLayer"
import { AppConfig, type AppConfigShape, describeConfigError } from "./config"
import { JsonLogger, PrettyLogger } from "./logger"
import { DatabaseHealth } from "./platform/Database"
import { describeFailure, preflight } from "./startup"

/**
 * The signal that asked the service to stop, for its "shutting down" line. The listener stays for the
 * whole life of the process: Ctrl-C in a terminal sends SIGINT to npm and to node, and npm passes its
 * own on, so node gets it twice; the runtime's listener is gone after the first, and a signal nobody
 * listens to ends the process at once (no `stopped` line, the embedded PostgreSQL left running). A
 * signal after the first is said and otherwise ignored: shutdown is bounded already.
 */
const signalReceived = Effect.gen(function*() {
  const runtime = yield* Effect.runtime<never>()
  const received: { signal?: NodeJS.Signals } = {}
  const onSignal = (signal: NodeJS.Signals) => {
    if (received.signal === undefined) {
      received.signal = signal
      return
    }
    Runtime.runFork(runtime)(Effect.logInfo("already shutting down: signal ignored").pipe(Effect.annotateLogs({ signal })))
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, onSignal)
  return received
})

/**
 * Serves until SIGINT or SIGTERM (exit status 0), or until the embedded PostgreSQL dies (status 1,
 * so that a supervisor starts the service again).
 */
const serve = (config: AppConfigShape) =>
  Effect.gen(function*() {
    const received = yield* signalReceived
    yield* preflight(config)
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
