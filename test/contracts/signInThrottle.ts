import { expect, type Vitest } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as crypto from "node:crypto"
import { signInFailuresAllowed, signInWindow, SignInThrottle } from "../../src/services/SignInThrottle"

const fresh = () => crypto.randomBytes(4).toString("hex")

/** The behaviour both backings of SignInThrottle must show. */
export const signInThrottleContract = (it: Vitest.MethodsNonLive<SignInThrottle, true>) => {
  it.effect("refuses an email after five failures within the window, for about the window", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const email = `Pat.${fresh()}@Example.com`
      for (let i = 0; i < signInFailuresAllowed - 1; i++) yield* throttle.failed(email, `10.1.${i}.${fresh().length}`)
      yield* throttle.check(email, "10.9.9.9")
      yield* throttle.failed(` ${email.toLowerCase()} `, "10.1.200.1")
      const refused = yield* Effect.flip(throttle.check(email, "10.9.9.9"))
      expect(refused._tag).toBe("SignInThrottled")
      const retry = refused._tag === "SignInThrottled" ? refused.retryAfterSeconds : 0
      expect(retry).toBeGreaterThan(Duration.toSeconds(signInWindow) - 60)
      expect(retry).toBeLessThanOrEqual(Duration.toSeconds(signInWindow))
      // Another email is not concerned.
      yield* throttle.check(`other.${fresh()}@example.com`, "10.9.9.9")
    }))

  it.effect("refuses an address after five failures with any emails; a success clears the email, not the address", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const address = `192.0.2.${fresh()}`
      const email = `sam.${fresh()}@example.com`
      for (let i = 0; i < signInFailuresAllowed; i++) yield* throttle.failed(`guess${i}.${fresh()}@example.com`, address)
      expect((yield* Effect.flip(throttle.check(email, address)))._tag).toBe("SignInThrottled")
      yield* throttle.check(email, "198.51.100.1")

      const other = `192.0.2.${fresh()}`
      for (let i = 0; i < signInFailuresAllowed; i++) yield* throttle.failed(email, `${other}-${i}`)
      expect((yield* Effect.flip(throttle.check(email, "198.51.100.1")))._tag).toBe("SignInThrottled")
      yield* throttle.succeeded(email)
      yield* throttle.check(email, "198.51.100.1")
      expect((yield* Effect.flip(throttle.check(email, address)))._tag).toBe("SignInThrottled")
    }))
}
