import { Deferred, Duration, Effect, FiberId, Schedule } from "effect"
import * as crypto from "node:crypto"
import type { BudgetLine, BudgetStoreFailure, BudgetStoreShape, SettledLine } from "./BudgetStore"

/**
 * Budget slices: this instance reserves a share of a budget in the shared store once (one reservation, atomic
 * across instances as every reservation is) and hands out requests' reservations from it in memory, so that a
 * request makes no round trip to the store. A slice is written back (settled: its requests' recorded costs added to
 * the budget's spend, its unused rest released) once it is older than `lifeMs`, or idle, and its requests have ended. As a
 * budget nears its amount the store refuses a whole share and the slice is cut to the request's own reservation:
 * then every request reserves in the store, and concurrent requests on any number of instances can never together
 * reserve more than the amount (docs/budgets.md).
 */

export interface SliceOptions {
  /** How long the store keeps an unsettled reservation (a crashed instance's slices lapse after it). */
  readonly ttlMs: number
  /** How long a slice takes new requests before it is written back. */
  readonly lifeMs: number
  /** The share of a budget's amount a slice asks for (at least the request's own reservation). */
  readonly share: number
  /** Told once a slice is written back, with the line's settled spend before and after. */
  readonly settled: (line: BudgetLine, settled: SettledLine) => Effect.Effect<void>
}

interface Slice {
  readonly id: string
  readonly line: BudgetLine
  readonly grantedNano: number
  readonly openedAt: number
  heldNano: number
  spentNano: number
  inflight: number
  closing: boolean
  written: boolean
}

/** What a reservation took: given back with the request's cost when it ends. */
export interface Taken {
  readonly release: (costNano: number) => void
}

export type TakeDecision = { readonly allowed: true; readonly taken: Taken } | { readonly allowed: false; readonly refusedLine: number }

const sliceKey = (line: BudgetLine) => `${line.key}|${line.periodStart}`

export const makeBudgetSlices = (store: BudgetStoreShape, options: SliceOptions) => {
  const open = new Map<string, Slice>()
  /** Slices no longer taking requests whose requests have not all ended. */
  const closing = new Set<Slice>()
  /** Open while some slice is open or closing: the sweep loop waits on it rather than waking every round for nothing. */
  const busy = Effect.unsafeMakeLatch(false)

  const write = (slice: Slice): Effect.Effect<void> => {
    if (slice.written) return Effect.void
    slice.written = true
    closing.delete(slice)
    return store.settle(slice.id, [slice.line], slice.spentNano).pipe(
      Effect.retry(Schedule.exponential(Duration.millis(200)).pipe(Schedule.intersect(Schedule.recurs(5)))),
      Effect.flatMap(([settled]) => (settled === undefined ? Effect.void : options.settled(slice.line, settled))),
      Effect.catchAll((failure) =>
        Effect.logError("a budget slice could not be written back: it lapses unsettled").pipe(
          Effect.annotateLogs({ budget: slice.line.key, spentNano: slice.spentNano, cause: String(failure.cause) })
        ))
    )
  }

  /** Stops a slice taking requests; written back now when none is in progress, else when the last one ends. */
  const close = (slice: Slice): Effect.Effect<void> => {
    if (!slice.closing) {
      slice.closing = true
      if (open.get(sliceKey(slice.line)) === slice) open.delete(sliceKey(slice.line))
      closing.add(slice)
    }
    return slice.inflight === 0 ? write(slice) : Effect.void
  }

  /** A request's end: its reservation leaves the slice, its cost stays (written back by the next sweep). */
  const release = (slice: Slice, amountNano: number, costNano: number) => {
    slice.heldNano -= amountNano
    slice.spentNano += costNano
    slice.inflight -= 1
  }

  /** From the line's open slice, when it is young enough and has room. */
  const fromOpen = (line: BudgetLine, amountNano: number, now: number): Slice | undefined => {
    const current = open.get(sliceKey(line))
    if (
      current === undefined || now - current.openedAt >= options.lifeMs ||
      current.grantedNano - current.heldNano - current.spentNano < amountNano
    ) return undefined
    current.heldNano += amountNano
    current.inflight += 1
    return current
  }

  /** A new slice being reserved, per line: requests arriving meanwhile wait for it rather than reserve their own. */
  const opening = new Map<string, Deferred.Deferred<void>>()

  /** A request's reservation on one line: from the line's open slice, else from a new one. */
  const takeLine = (line: BudgetLine, amountNano: number, now: number): Effect.Effect<Slice | undefined, BudgetStoreFailure> =>
    Effect.suspend(() => {
      const ready = fromOpen(line, amountNano, now)
      if (ready !== undefined) return Effect.succeed(ready)
      const key = sliceKey(line)
      const inFlight = opening.get(key)
      // Another request is reserving the line's next slice: take from it once it is there, else reserve alone.
      if (inFlight !== undefined) {
        return Effect.zipRight(Deferred.await(inFlight), Effect.suspend(() => {
          const after = fromOpen(line, amountNano, now)
          return after !== undefined ? Effect.succeed(after) : reserveSlice(line, amountNano, now)
        }))
      }
      const done = Deferred.unsafeMake<void>(FiberId.none)
      opening.set(key, done)
      return reserveSlice(line, amountNano, now).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (opening.get(key) === done) opening.delete(key)
          return Deferred.succeed(done, undefined)
        }))
      )
    })

  /** Reserves a share of the line's budget (or, near its amount, the request's own reservation) as a new slice. */
  const reserveSlice = (line: BudgetLine, amountNano: number, now: number): Effect.Effect<Slice | undefined, BudgetStoreFailure> => {
    const current = open.get(sliceKey(line))
    const replaced = current === undefined ? Effect.void : close(current)
    const share = Math.max(amountNano, Math.floor(line.limitNano * options.share))
    const reserveOf = (grantedNano: number) => {
      const id = crypto.randomUUID()
      return Effect.map(store.reserve(id, [line], grantedNano, options.ttlMs), (decision) => (decision.allowed ? { id, grantedNano } : undefined))
    }
    return replaced.pipe(
      Effect.zipRight(reserveOf(share)),
      // Near the amount a whole share no longer fits: the request's own reservation may.
      Effect.flatMap((granted) => (granted !== undefined || share === amountNano ? Effect.succeed(granted) : reserveOf(amountNano))),
      Effect.map((granted) => {
        if (granted === undefined) return undefined
        const slice: Slice = {
          id: granted.id,
          line,
          grantedNano: granted.grantedNano,
          openedAt: now,
          heldNano: amountNano,
          spentNano: 0,
          inflight: 1,
          closing: false,
          written: false
        }
        // A slice of the request's size alone is used once: written back when the request ends.
        if (granted.grantedNano === amountNano) {
          slice.closing = true
          closing.add(slice)
        } else {
          // One opened meanwhile by a concurrent request stops taking requests: the sweep writes it back.
          const previous = open.get(sliceKey(line))
          if (previous !== undefined) {
            previous.closing = true
            closing.add(previous)
          }
          open.set(sliceKey(line), slice)
        }
        busy.unsafeOpen()
        return slice
      })
    )
  }

  return {
    /** Holds `amountNano` on every line or on none: the refusal names the first line it did not fit. */
    take: (lines: ReadonlyArray<BudgetLine>, amountNano: number, now: number): Effect.Effect<TakeDecision, BudgetStoreFailure> =>
      Effect.suspend(() => {
        const taken: Array<Slice> = []
        const giveBack = () => {
          for (const slice of taken) release(slice, amountNano, 0)
        }
        const next = (index: number): Effect.Effect<TakeDecision, BudgetStoreFailure> => {
          if (index === lines.length) {
            let released = false
            return Effect.succeed({
              allowed: true,
              taken: {
                release: (costNano) => {
                  if (released) return
                  released = true
                  for (const slice of taken) release(slice, amountNano, costNano)
                }
              }
            })
          }
          return takeLine(lines[index]!, amountNano, now).pipe(
            Effect.tapError(() => Effect.sync(giveBack)),
            Effect.flatMap((slice) => {
              if (slice === undefined) {
                giveBack()
                return Effect.succeed({ allowed: false, refusedLine: index } as const)
              }
              taken.push(slice)
              return next(index + 1)
            })
          )
        }
        return next(0)
      }),
    /** Closes the slices past their life and writes back the closed ones whose requests ended (every so often; all at shutdown). */
    /** Returns once some slice is open or closing (at once if one is): what the next sweep would have to do. */
    untilBusy: Effect.suspend(() => {
      if (open.size > 0 || closing.size > 0) return Effect.void
      busy.unsafeClose()
      return busy.await
    }),
    sweep: (now: number, all = false): Effect.Effect<void> =>
      Effect.forEach(
        // A slice no request holds is written back too: an idle budget shows nothing reserved.
        [...open.values(), ...closing].filter((slice) => all || slice.closing || slice.inflight === 0 || now - slice.openedAt >= options.lifeMs),
        close,
        { discard: true }
      )
  }
}
