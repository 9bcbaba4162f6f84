import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { Effect, Layer } from "effect"
import { WorkspaceApi } from "./api/Api"
import { AppConfig } from "./config"
import { AdminHandlers } from "./handlers/admin"
import { ConsoleHandlers } from "./handlers/console"
import { ConsoleAccountHandlers } from "./handlers/consoleAccount"
import { ConsoleSessionHandlers } from "./handlers/consoleSession"
import { ConsoleAuthLive, ConsoleOriginLive } from "./http/consoleMiddleware"
import { AuditLog } from "./services/workspaces/AuditLog"
import { ConsoleAccess } from "./services/people/ConsoleAccess"
import { Members } from "./services/people/Members"
import { Passwords } from "./services/identity/Passwords"
import { Sessions } from "./services/identity/Sessions"
import { SignInThrottle } from "./services/identity/SignInThrottle"
import { UsageOverview } from "./services/usage/4-UsageOverview"
import { WorkspaceLimits } from "./services/limits/WorkspaceLimits"
import { DownloadsHandlers } from "./handlers/downloads"
import { ExportsHandlers } from "./handlers/exports"
import { HealthHandlers } from "./handlers/health"
import { MetricsHandlers } from "./handlers/metrics"
import { ProviderAHandlers, ProviderBHandlers, ProviderCHandlers } from "./handlers/providers"
import {
  AdminAuthLive,
  ExportAuthLive,
  ProviderAAuthLive,
  ProviderBAuthLive,
  ProviderCAuthLive
} from "./http/authMiddleware"
import { ForwardingLane } from "./http/forwardingLane"
import { HttpServerLive } from "./http/server"
import { ApiKeys } from "./services/identity/ApiKeys"
import { AuthService } from "./services/identity/AuthService"
import { CredentialThrottle } from "./services/identity/CredentialThrottle/index"
import { ChatCompletions } from "./services/endpoints/ChatCompletions"
import { Embeddings } from "./services/endpoints/Embeddings"
import { Responses } from "./services/endpoints/Responses"
import { FimCompletions } from "./services/endpoints/FimCompletions"
import { Forwarder } from "./services/forwarding/Forwarder"
import { LargeBodies } from "./services/forwarding/LargeBodies"
import { CountTokens } from "./services/endpoints/CountTokens"
import { Messages } from "./services/endpoints/Messages"
import { Prices } from "./services/usage/Prices"
import { RateLimiter } from "./services/limits/RateLimiter"
import { RateLimits } from "./services/limits/RateLimits"
import { Budgets } from "./services/limits/Budgets"
import { BudgetAlerts } from "./services/limits/BudgetAlerts"
import { BudgetStore } from "./services/limits/BudgetStore"
import { Tokenizer } from "./services/forwarding/Tokenizer"
import { UpstreamClient } from "./services/forwarding/UpstreamClient"
import { Routes } from "./services/forwarding/Routes"
import { ModelCatalog } from "./services/forwarding/ModelCatalog"
import { EndpointForwarding } from "./services/forwarding/EndpointForwarding"
import { UsageJournal } from "./services/usage/2-UsageJournal"
import { UsageRecorder } from "./services/usage/1-UsageRecorder"
import { DatabaseLive } from "./platform/Database"
import { ExportService } from "./services/exports/ExportService/index"
import { ExportPriceCatalog } from "./services/exports/ExportService/priceCatalog"
import { ExportDownloads } from "./services/exports/ExportDownloads"
import { ExportStorage } from "./services/exports/ExportStorage"
import { SigningSecret } from "./services/exports/SigningSecret"
import { UsageLedger } from "./services/usage/3-UsageLedger/index"
import { LocalSecrets } from "./platform/LocalSecrets"
import { Readiness } from "./platform/Readiness"
import { Dependencies } from "./services/health/Dependencies"
import { Metrics } from "./platform/Metrics"
import { tracingFromConfig } from "./platform/otlpTracing"
import { Workspaces } from "./services/workspaces/Workspaces"
import { ProviderCredentials } from "./services/providerKeys/ProviderCredentials"
import { ProviderKeyCheck } from "./services/providerKeys/ProviderKeyCheck"
import { ProviderKeys } from "./services/providerKeys/ProviderKeys"
import { WebhookDeliveryLive } from "./services/webhooks/WebhookDelivery"
import { Webhooks } from "./services/webhooks/Webhooks"
import { WebhookSender } from "./services/webhooks/WebhookSender"
import { WebhookStore } from "./services/webhooks/WebhookStore/index"

/**
 * Everything the service keeps: the stores over PostgreSQL, export files (EXPORT_STORAGE), the usage journal
 * in DATA_DIR and the server secret. The one swap point of the composition: test/support/app.ts gives
 * `appWith` the same services kept in memory (`X.memory`), and everything else is shared.
 */
export const StoresLive = Layer.mergeAll(
  Members.layer,
  Passwords.layer,
  Sessions.layer,
  SignInThrottle.layer,
  AuditLog.layer,
  UsageOverview.layer,
  UsageLedger.layer,
  Readiness.layer,
  ProviderKeys.layer,
  WebhookStore.layer,
  ExportStorage.fromConfig,
  UsageJournal.layer,
  // PostgreSQL, or Redis where the rate limits are shared there.
  BudgetStore.fromConfig
).pipe(
  Layer.provideMerge(ApiKeys.layer),
  Layer.provideMerge(Workspaces.layer),
  // Pseudonyms of ingested users are keyed by it.
  Layer.provideMerge(SigningSecret.layer),
  Layer.provideMerge(DatabaseLive)
)

/**
 * The built-in simulator on a loopback port, for the upstreams left unset (Routes starts it only then): its base URL.
 * Imported then: a service with every upstream configured does not hold the simulator's code (bench/RESULTS.md,
 * "Footprint").
 */
const startSimulator = Effect.promise(() => import("./simulator/embedded")).pipe(
  Effect.flatMap((simulator) => simulator.startEmbeddedSimulator)
)

/** Forwarding to the providers: upstreams (or the simulator), the pooled client, usage recording. */
export const ForwardingLive = Layer.mergeAll(
  ChatCompletions.layer,
  Embeddings.layer,
  Responses.layer,
  Messages.layer,
  CountTokens.layer,
  FimCompletions.layer,
  // Large request bodies read a few at a time, by the lane and the HttpApi handlers alike.
  LargeBodies.layer
).pipe(
  // The one procedure of every forwarded endpoint: route, check, then the Forwarder.
  Layer.provideMerge(EndpointForwarding.layer),
  Layer.provideMerge(Forwarder.layer),
  Layer.provide([UsageRecorder.layer, Prices.layer, Tokenizer.layer]),
  // A workspace's own provider keys: checked with the provider when saved, used by the Forwarder.
  Layer.provideMerge(ProviderCredentials.layer.pipe(Layer.provide(ProviderKeyCheck.layer))),
  // Exposed: the operator's view of the deployments (GET /admin/upstreams) reads the routes.
  Layer.provideMerge(Routes.layer(startSimulator)),
  Layer.provide(UpstreamClient.layer),
  Layer.provideMerge(RateLimits.layer),
  // Exposed: the key list and the console read each budget's spend; thresholds go to the workspace's webhooks.
  Layer.provideMerge(Budgets.layer.pipe(Layer.provide(BudgetAlerts.webhooks))),
  // Exposed: the console reads what remains of each limit from the same buckets.
  Layer.provideMerge(RateLimiter.fromConfig),
  // Exposed: the one catalog (built-in and the routes file's) every part reads models from.
  Layer.provideMerge(ModelCatalog.layer)
)

/** A workspace's webhooks (exposed: the handlers and the budgets' announcements) and their background sender. */
export const WebhooksLive = Layer.merge(Webhooks.layer, WebhookDeliveryLive).pipe(Layer.provide(WebhookSender.layer))

/** Which role the signed-in person has where: the console's access rule over the people store. */
export const ConsoleServicesLive = ConsoleAccess.layer

/** The export pipeline over the usage ledger, and the signed downloads of its files. Platform messages are priced from the price table. */
export const UsageExportsLive = Layer.merge(ExportService.layer, ExportDownloads.layer).pipe(
  Layer.provide(ExportPriceCatalog.fromPrices.pipe(Layer.provide(Prices.layer), Layer.provide(ModelCatalog.layer)))
)

/** The API, with BASE_PATH as its documented server so the docs' "try it" calls the right paths. */
export const ApiLive = Layer.unwrapEffect(
  Effect.map(AppConfig, ({ basePath }) =>
    HttpApiBuilder.api(basePath === "" ? WorkspaceApi : WorkspaceApi.annotate(OpenApi.Servers, [{ url: basePath }]))
  )
).pipe(
  Layer.provide([
    AdminHandlers,
    HealthHandlers,
    MetricsHandlers,
    ExportsHandlers,
    DownloadsHandlers,
    ProviderAHandlers,
    ProviderBHandlers,
    ProviderCHandlers,
    ConsoleSessionHandlers,
    ConsoleAccountHandlers,
    ConsoleHandlers
  ]),
  Layer.provide([AdminAuthLive, ExportAuthLive, ProviderAAuthLive, ProviderBAuthLive, ProviderCAuthLive, ConsoleAuthLive, ConsoleOriginLive])
)

/**
 * HTTP server, API and services over the given stores, with the given forwarding lane. Needs only AppConfig
 * (and what the stores need).
 */
export const appWith = <E, R, ROut, E2, R2>(lane: Layer.Layer<ForwardingLane, E, R>, stores: Layer.Layer<ROut, E2, R2>) =>
  HttpServerLive.pipe(
    Layer.provide(ApiLive),
    Layer.provide(lane),
    // What /readyz asks beside the database: the rate limiter's and export storage's remote stores.
    Layer.provide(Dependencies.layer),
    Layer.provide(WorkspaceLimits.layer),
    Layer.provide(ForwardingLive),
    Layer.provide(UsageExportsLive),
    Layer.provide(ConsoleServicesLive),
    Layer.provideMerge(WebhooksLive),
    Layer.provideMerge(AuthService.layer),
    // One throttle of failed credentials, shared by the lane and the HttpApi app (in Redis with RATE_LIMIT_STORE=redis).
    Layer.provideMerge(CredentialThrottle.fromConfig),
    Layer.provideMerge(stores),
    Layer.provideMerge(LocalSecrets.layer),
    // Below everything: every service may count (and the database pool is read at each scrape).
    Layer.provideMerge(Metrics.fromConfig),
    // Built first, so that every runtime the layers above capture has the tracer (when OTEL_* ask for one).
    Layer.provide(tracingFromConfig)
  )

/** The whole service. */
export const AppLive = appWith(ForwardingLane.layer, StoresLive)

/** The same service with every request answered by the HttpApi app: what the forwarding lane is tested against. */
export const AppWithoutLaneLive = appWith(ForwardingLane.none, StoresLive)
