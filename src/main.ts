import { NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Layer, Logger, Option } from "effect"
import { AppLive } from "./appLayer"
import { AppConfig, describeConfigError } from "./config"
import { JsonLogger } from "./logger"

/** Reads the configuration, composes the service and serves until SIGINT or SIGTERM. */
const main = Effect.gen(function*() {
  const config = yield* AppConfig
  yield* Layer.launch(AppLive).pipe(
    Effect.provideService(AppConfig, config),
    Logger.withMinimumLogLevel(config.logLevel)
  )
}).pipe(
  Effect.provide(AppConfig.layer),
  // A bad setting is one plain line; any other start-up failure is logged with its cause. Both exit 1.
  Effect.tapErrorCause((cause) =>
    Option.match(Cause.failureOption(cause), {
      onSome: (error) =>
        error._tag === "ConfigError"
          ? Console.error(describeConfigError(error))
          : Effect.logError("service stopped", error),
      onNone: () => Effect.logError("service stopped", Cause.pretty(cause))
    })
  ),
  Effect.provide(JsonLogger)
)

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
