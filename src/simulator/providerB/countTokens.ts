// provider_b token counting (POST /v1/messages/count_tokens): the request checked as the messages endpoint
// checks it (without max_tokens), answered with `{ input_tokens }` counted as a messages answer counts them.
import { Effect } from "effect"
import { messagesModels } from "../catalog"
import { jsonReply, type SimulatedEndpoint } from "../endpoint"
import { decodeRequest, rejectUnknownFields } from "../requestBody"
import { SimulatorError } from "../simulatorError"
import { SimulatorTokenizer } from "../tokenizer"
import { providerBDialect } from "./dialect"
import { checkConversation, inputTokens } from "./messages"
import { CountTokensRequest, knownCountTokensFields } from "./messagesRequest"

export const countTokensEndpoint: SimulatedEndpoint<SimulatorTokenizer> = {
  dialect: providerBDialect,
  answer: (body, context) =>
    Effect.gen(function* () {
      const counter = yield* SimulatorTokenizer
      if (context.header("anthropic-version") === undefined) {
        return yield* new SimulatorError({ kind: "invalid_request", message: "anthropic-version: header is required" })
      }
      yield* rejectUnknownFields(body, knownCountTokensFields, () => "Extra inputs are not permitted")
      const request = yield* decodeRequest(CountTokensRequest, body)
      if (!messagesModels.has(request.model)) {
        return yield* new SimulatorError({ kind: "not_found", message: `model: ${request.model}` })
      }
      yield* checkConversation(request)
      return jsonReply({ input_tokens: inputTokens(request, counter) })
    })
}
