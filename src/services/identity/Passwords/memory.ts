import { Duration, Effect, Either, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import { normalizeEmail } from "../../../domain/console"
import { decoyHash, generateToken, hashPassword, hashToken, isWellFormedToken, verifyPassword } from "../../../domain/password"
import type { Person } from "../../people/Members/contract"
import { currentDate, PeopleTables, type PeopleState, withoutSessionsOf } from "../../people/peopleTables"
import { NoAccount, type PasswordsShape, passwordResetLifetime, ResetLinkGone, WrongPassword } from "./contract"

/** Passwords kept in memory, over `PeopleTables`: each change one `Ref.modify`, as each is one transaction in PostgreSQL. */
export const makeMemoryPasswords: Effect.Effect<PasswordsShape, never, PeopleTables> = Effect.gen(function*() {
  const tables = yield* PeopleTables
  const tokenKey = (token: string) => hashToken(token).toString("hex")
  const personView = ({ email, id, name }: Person): Person => ({ id, email, name })

  /** The usable reset link of a token, or why there is none. */
  const liveReset = (state: PeopleState, token: string, now: Date) => {
    if (!isWellFormedToken(token)) return Either.left(new ResetLinkGone({ reason: "unknown" }))
    const reset = [...state.passwordResets.values()].find((row) => row.tokenHash === tokenKey(token))
    if (reset === undefined) return Either.left(new ResetLinkGone({ reason: "unknown" }))
    if (reset.usedAt !== null) return Either.left(new ResetLinkGone({ reason: "used" }))
    if (reset.expiresAt.getTime() <= now.getTime()) return Either.left(new ResetLinkGone({ reason: "expired" }))
    return Either.right({ reset, person: state.people.get(reset.personId)! })
  }

  return {
    change: (personId, currentPassword, newPassword, keepSession) =>
      Effect.gen(function*() {
        const stored = Option.flatMap(
          Option.fromNullable((yield* Ref.get(tables)).people.get(personId)),
          (person) => Option.fromNullable(person.passwordHash)
        )
        const matches = yield* verifyPassword(currentPassword, Option.getOrElse(stored, () => decoyHash))
        if (!matches || Option.isNone(stored)) return yield* Effect.fail(new WrongPassword())
        const hash = yield* hashPassword(newPassword)
        return yield* Effect.flatten(Ref.modify(tables, (state): [Either.Either<void, WrongPassword>, PeopleState] => {
          const person = state.people.get(personId)
          // Changed by someone else since it was checked: the current password given is no longer current.
          if (person === undefined || person.passwordHash !== stored.value) return [Either.left(new WrongPassword()), state]
          const next = { ...state, people: new Map(state.people).set(personId, { ...person, passwordHash: hash }) }
          return [Either.right(undefined), withoutSessionsOf(next, personId, keepSession.toString("hex"))]
        }))
      }),
    issueReset: (email) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const token = generateToken()
        const expiresAt = new Date(now.getTime() + Duration.toMillis(passwordResetLifetime))
        return yield* Effect.flatten(Ref.modify(tables, (state): [Either.Either<Person, NoAccount>, PeopleState] => {
          const person = [...state.people.values()].find((p) => p.email === normalizeEmail(email) && p.passwordHash !== null)
          if (person === undefined) return [Either.left(new NoAccount({ email: normalizeEmail(email) })), state]
          // Only the newest link counts.
          const passwordResets = new Map([...state.passwordResets].map(([id, row]) =>
            [id, row.personId === person.id && row.usedAt === null ? { ...row, usedAt: now } : row] as const
          ))
          const id = crypto.randomUUID()
          passwordResets.set(id, { id, tokenHash: tokenKey(token), personId: person.id, expiresAt, usedAt: null })
          return [Either.right(personView(person)), { ...state, passwordResets }]
        })).pipe(Effect.map((person) => ({ token, expiresAt, person })))
      }),
    resetLink: (token) =>
      Effect.gen(function*() {
        const now = yield* currentDate
        const { person, reset } = yield* liveReset(yield* Ref.get(tables), token, now)
        return { email: person.email, expiresAt: reset.expiresAt }
      }),
    useReset: (token, newPassword) =>
      Effect.gen(function*() {
        const hash = yield* hashPassword(newPassword)
        const now = yield* currentDate
        return yield* Effect.flatten(Ref.modify(tables, (state): [Either.Either<Person, ResetLinkGone>, PeopleState] => {
          const live = liveReset(state, token, now)
          if (Either.isLeft(live)) return [Either.left(live.left), state]
          const { person, reset } = live.right
          const next = {
            ...state,
            people: new Map(state.people).set(person.id, { ...person, passwordHash: hash }),
            passwordResets: new Map(state.passwordResets).set(reset.id, { ...reset, usedAt: now })
          }
          return [Either.right(personView(person)), withoutSessionsOf(next, person.id)]
        }))
      })
  }
})
