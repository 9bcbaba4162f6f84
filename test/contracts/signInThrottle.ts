import { expect, type Vitest } from "@effect/vitest"
import { Duration, Effect } from "effect"
import * as crypto from "node:crypto"
import { signInFailuresAllowed, signInWindow, SignInThrottle } from "../../src/services/identity/SignInThrottle"

const fresh = () => crypto.randomBytes(4).toString("hex")
const freshAddress = () => `10.${crypto.randomInt(256)}.${crypto.randomInt(256)}.${crypto.randomInt(256)}`

/** The behaviour both backings of SignInThrottle must show. */
export const signInThrottleContract = (it: Vitest.MethodsNonLive<SignInThrottle, true>) => {
  /** Reserves an attempt and leaves it counted: a wrong password. */
  const fail = (attempt: Parameters<SignInThrottle["Type"]["reserve"]>[0]) => Effect.flatMap(SignInThrottle, (t) => Effect.asVoid(t.reserve(attempt)))

  it.effect("refuses the sixth attempt of an email from an address, for about the window; from elsewhere it is not refused", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const email = `Pat.${fresh()}@Example.com`
      const address = freshAddress()
      for (let i = 0; i < signInFailuresAllowed; i++) yield* fail({ email: i % 2 === 0 ? email : ` ${email.toLowerCase()} `, address })
      const refused = yield* Effect.flip(throttle.reserve({ email, address }))
      expect(refused._tag).toBe("SignInThrottled")
      const retry = refused._tag === "SignInThrottled" ? refused.retryAfterSeconds : 0
      expect(retry).toBeGreaterThan(Duration.toSeconds(signInWindow) - 60)
      expect(retry).toBeLessThanOrEqual(Duration.toSeconds(signInWindow))
      // The person, from an address that has not failed, is let in: nobody locks them out from elsewhere.
      yield* throttle.reserve({ email, address: freshAddress() })
    }))

  it.effect("refuses an address after five failures with any emails, and the operator from it too", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const address = freshAddress()
      for (let i = 0; i < signInFailuresAllowed; i++) yield* fail({ email: `guess${i}.${fresh()}@example.com`, address })
      expect((yield* Effect.flip(throttle.reserve({ email: `sam.${fresh()}@example.com`, address })))._tag).toBe("SignInThrottled")
      expect((yield* Effect.flip(throttle.reserve({ operator: true, address })))._tag).toBe("SignInThrottled")
    }))

  it.effect("counts the operator per address only: failures from five addresses do not refuse a sixth", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      for (let i = 0; i < 3 * signInFailuresAllowed; i++) yield* fail({ operator: true, address: freshAddress() })
      const reservation = yield* throttle.reserve({ operator: true, address: freshAddress() })
      expect(reservation.subjects).toHaveLength(1)
    }))

  it.effect("lets at most five of forty concurrent attempts for one email and address through", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const email = `racer.${fresh()}@example.com`
      const address = freshAddress()
      const outcomes = yield* Effect.all(
        Array.from({ length: 40 }, () => Effect.either(throttle.reserve({ email, address }))),
        { concurrency: "unbounded" }
      )
      expect(outcomes.filter((outcome) => outcome._tag === "Right")).toHaveLength(signInFailuresAllowed)
      expect(outcomes.filter((outcome) => outcome._tag === "Left" && outcome.left._tag === "SignInThrottled")).toHaveLength(40 - signInFailuresAllowed)
    }))

  it.effect("a success gives its attempt back and clears the email's failures from that address, not the address's", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const email = `kim.${fresh()}@example.com`
      const address = freshAddress()
      // Four wrong passwords, then the right one: the fifth attempt is given back, the pair starts over.
      for (let i = 0; i < signInFailuresAllowed - 1; i++) yield* fail({ email, address })
      yield* throttle.succeeded(yield* throttle.reserve({ email, address }))
      // The address keeps its four failures: one more (another email) spends it.
      yield* fail({ email: `other.${fresh()}@example.com`, address })
      expect((yield* Effect.flip(throttle.reserve({ email, address })))._tag).toBe("SignInThrottled")
      // Right passwords do not add up: the operator signs in as often as it likes.
      const operatorAddress = freshAddress()
      for (let i = 0; i < 3 * signInFailuresAllowed; i++) yield* throttle.succeeded(yield* throttle.reserve({ operator: true, address: operatorAddress }))
    }))
}
