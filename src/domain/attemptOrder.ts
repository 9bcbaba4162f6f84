/**
 * The order in which a route's deployments are tried for one request (DESIGN "Failover"): by priority, lower
 * first; within a priority at random by weight; deployments cooling down are skipped, unless all are, when the
 * one whose cooldown ends first is tried. At most `maxAttempts` of them.
 */

export interface Candidate {
  readonly name: string
  readonly priority: number
  readonly weight: number
}

export const attemptOrder = <C extends Candidate>(
  candidates: ReadonlyArray<C>,
  coolingUntil: (name: string) => number | undefined,
  now: number,
  maxAttempts: number,
  random: () => number = Math.random
): ReadonlyArray<C> => {
  // The common case, one deployment: no array made, no random drawn.
  if (candidates.length === 1) return candidates
  const available = candidates.filter((candidate) => (coolingUntil(candidate.name) ?? 0) <= now)
  if (available.length === 0) {
    let first: C | undefined
    for (const candidate of candidates) {
      if (first === undefined || (coolingUntil(candidate.name) ?? 0) < (coolingUntil(first.name) ?? 0)) first = candidate
    }
    return first === undefined ? [] : [first]
  }
  const priorities = [...new Set(available.map((candidate) => candidate.priority))].sort((a, b) => a - b)
  const ordered = priorities.flatMap((priority) => byWeight(available.filter((candidate) => candidate.priority === priority), random))
  return ordered.slice(0, Math.max(1, maxAttempts))
}

/** A weighted random order: each next one drawn with a chance in proportion to its weight among those left. */
const byWeight = <C extends Candidate>(group: ReadonlyArray<C>, random: () => number): ReadonlyArray<C> => {
  const left = [...group]
  const order: Array<C> = []
  while (left.length > 0) {
    const total = left.reduce((sum, candidate) => sum + candidate.weight, 0)
    let point = random() * total
    let index = 0
    while (index < left.length - 1 && point >= left[index]!.weight) {
      point -= left[index]!.weight
      index += 1
    }
    order.push(left[index]!)
    left.splice(index, 1)
  }
  return order
}

/** Statuses after which the next deployment is tried (before the first byte reached the client): the rest are answered. */
export const failsOver = (status: number): boolean => status === 408 || status === 429 || status >= 500
