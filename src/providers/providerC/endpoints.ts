import { forwardedEndpoint } from "../forwardedEndpoint"
import { providerC } from "./dialect"
import { fimProtocol } from "./protocol"
import { FimCompletionRequest, FimCompletionResponse } from "./fimWire"

export const fimCompletions = forwardedEndpoint({
  name: "fimCompletions",
  provider: providerC,
  path: "/v1/fim/completions",
  payload: FimCompletionRequest,
  success: FimCompletionResponse,
  description: "With `stream: true` the answer is data-only text/event-stream ending with `data: [DONE]`.",
  protocol: fimProtocol,
  operation: "fim_completions",
  family: "fim",
  record: "fim_completions",
  passedHeaders: []
})
