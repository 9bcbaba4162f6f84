import type { ApiRequestRecord } from "../../src/services/usage/1-UsageRecorder"

/**
 * One forwarded request's record as the Forwarder makes it (chat completion, provider_a eu, completed), with
 * the given fields instead: the fixture of the recorder and ledger tests.
 */
export const requestRecord = (fields: Partial<ApiRequestRecord> = {}): ApiRequestRecord => ({
  recordId: crypto.randomUUID(),
  workspaceId: "6f1c2b3a-0000-4000-8000-000000000001",
  keyId: "00000000-0000-0000-0000-000000000001",
  endpoint: "chat_completions",
  provider: "provider_a",
  region: "eu",
  model: "chatgen-4o",
  status: 200,
  outcome: "completed",
  stream: false,
  inputTokens: 3,
  outputTokens: 4,
  costUsd: 0.001,
  clamped: false,
  latencyMs: 12.4,
  requestId: "req_1",
  createdAt: new Date(),
  byok: false,
  // The one deployment the shorthand variables make of provider_a/eu.
  deployment: "provider_a-eu",
  ...fields
})
