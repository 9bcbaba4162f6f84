// Serves the simulator on its own port and tells where: the API root to configure as an upstream URL.
import { HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { VertexAuthority } from "./clouds/vertex/authority"
import { FaultLedger } from "./faultLedger"
import { simulatorRouter } from "./router"

export class SimulatorAddress extends Context.Tag("simulator/SimulatorAddress")<
  SimulatorAddress,
  {
    /** e.g. http://127.0.0.1:41234: the API root of all three simulated providers. */
    readonly baseUrl: string
  }
>() {}

/** The simulator served by whatever HttpServer is provided (a real port, or NodeHttpServer.layerTest). */
export const simulatorServe = HttpServer.serve(simulatorRouter).pipe(
  // The per-request server span is pure cost here: the simulator is the benchmarks' baseline.
  HttpMiddleware.withTracerDisabledWhen(() => true),
  Layer.provide(FaultLedger.layer),
  // Kept in the output: tests read the simulated cloud's service account and count the tokens it issued.
  Layer.provideMerge(VertexAuthority.layer)
)

const address = Layer.effect(
  SimulatorAddress,
  HttpServer.addressWith((bound) =>
    Effect.succeed({
      baseUrl:
        bound._tag === "UnixAddress"
          ? `http+unix://${bound.path}`
          : `http://${bound.hostname === "0.0.0.0" || bound.hostname === "::" ? "127.0.0.1" : bound.hostname}:${bound.port}`
    })
  )
)

/** The simulator on its own port (port 0 picks a free one; loopback by default); needs settings and a tokenizer. */
export const SimulatorServerLive = (options: { readonly port?: number; readonly host?: string } = {}) =>
  Layer.merge(simulatorServe, address).pipe(
    // A gateway under a burst opens many upstream connections at once: Node's default queue (511) would drop some,
    // and their SYN retransmission (a second) would read as the gateway's stall.
    Layer.provide(NodeHttpServer.layer(createServer, { port: options.port ?? 0, host: options.host ?? "127.0.0.1", backlog: 4096 }))
  )
