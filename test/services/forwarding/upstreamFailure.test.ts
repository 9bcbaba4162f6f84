import { describe, expect, it } from "vitest"
import { operatorWords, UpstreamFailure } from "../../../src/services/forwarding/UpstreamFailure"

// What the operator reads of a failed attempt (GET /admin/upstreams): the kind and a code, never the address
// undici's messages carry.
describe("operatorWords", () => {
  it("keeps a connection error's code and drops its address", () => {
    const refused = new UpstreamFailure({ kind: "unreachable", detail: "Error: connect ECONNREFUSED 10.1.2.3:443" })
    expect(operatorWords(refused)).toBe("unreachable: ECONNREFUSED")
    const reset = new UpstreamFailure({ kind: "unreachable", detail: "SocketError: other side closed (UND_ERR_SOCKET) upstream.internal:8443" })
    expect(operatorWords(reset)).toBe("unreachable: UND_ERR_SOCKET")
    expect(operatorWords(new UpstreamFailure({ kind: "unreachable", detail: "something at secret-host.example" }))).toBe("unreachable: the connection failed")
  })

  it("says a timeout without undici's message, which names the address", () => {
    const timeout = new UpstreamFailure({ kind: "timeout", detail: "Connect Timeout Error (attempted address: secret-host.example:443, timeout: 10000ms)" })
    expect(operatorWords(timeout)).toBe("timeout: no answer in time")
  })

  it("keeps the service's own description of a malformed answer", () => {
    expect(operatorWords(new UpstreamFailure({ kind: "malformed", detail: "content-type text/html" }))).toBe("malformed: content-type text/html")
  })
})
