// The simulator's routes: the providers' API paths under their API roots, the clouds' paths, and a health check.
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { azureRouter } from "./clouds/azure/routes"
import { serveBedrock } from "./clouds/bedrock/invoke"
import { serveRawPredict } from "./clouds/vertex/rawPredict"
import { serveServiceAccountFile, serveToken } from "./clouds/vertex/token"
import { serveEndpoint } from "./endpoint"
import { serveModels } from "./models"
import { chatCompletionsEndpoint } from "./providerA/chatCompletions"
import { embeddingsEndpoint } from "./providerA/embeddings"
import { responsesEndpoint } from "./providerA/responses"
import { countTokensEndpoint } from "./providerB/countTokens"
import { messagesEndpoint } from "./providerB/messages"
import { fimCompletionsEndpoint } from "./providerC/fimCompletions"

export const simulatorRouter = HttpRouter.empty.pipe(
  HttpRouter.concat(azureRouter),
  HttpRouter.post("/v1/chat/completions", serveEndpoint(chatCompletionsEndpoint)),
  HttpRouter.post("/v1/embeddings", serveEndpoint(embeddingsEndpoint)),
  HttpRouter.post("/v1/responses", serveEndpoint(responsesEndpoint)),
  HttpRouter.post("/v1/messages", serveEndpoint(messagesEndpoint)),
  HttpRouter.post("/v1/messages/count_tokens", serveEndpoint(countTokensEndpoint)),
  HttpRouter.post("/v1/fim/completions", serveEndpoint(fimCompletionsEndpoint)),
  HttpRouter.get("/v1/models", serveModels),
  // The clouds: Bedrock's InvokeModel (the model id in the path).
  HttpRouter.post("/model/:modelId/invoke", serveBedrock("invoke")),
  HttpRouter.post("/model/:modelId/invoke-with-response-stream", serveBedrock("invoke-with-response-stream")),
  HttpRouter.post("/model/:modelId/count-tokens", serveBedrock("count-tokens")),
  // Vertex: rawPredict and streamRawPredict, and the service account's token endpoint.
  HttpRouter.post("/v1/projects/*", serveRawPredict),
  HttpRouter.post("/token", serveToken),
  HttpRouter.get("/vertex/service-account.json", serveServiceAccountFile),
  HttpRouter.get("/healthz", HttpServerResponse.text("ok")),
  HttpRouter.all(
    "*",
    Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
      HttpServerResponse.unsafeJson(
        {
          error: {
            message: `Unknown request URL: ${request.method} ${request.url}.`,
            type: "invalid_request_error",
            param: null,
            code: "unknown_url"
          }
        },
        { status: 404 }
      )
    )
  )
)
