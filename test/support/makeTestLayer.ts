import { Context, Effect, Layer } from "effect"

/**
 * A layer of `tag` whose service has only the given members; any other member, when used, dies naming
 * it, so a stub cannot pass silently for a part of the service it does not implement. After the
 * Effect-TS examples (`src/lib/Layer.ts`).
 */
export const makeTestLayer = <I, S extends object>(tag: Context.Tag<I, S>) => (service: Partial<S>): Layer.Layer<I> =>
  Layer.succeed(
    tag,
    new Proxy({ ...service } as S, {
      get: (target, property, receiver) =>
        property in target || typeof property === "symbol" || notMembers.has(property)
          ? Reflect.get(target, property, receiver)
          : unimplemented(tag.key, property)
    })
  )

/** Asked of any object by the runtime or by vitest's printing; never members of a service. */
const notMembers = new Set(["then", "toJSON", "constructor", "asymmetricMatch", "$$typeof", "nodeType"])

/** Works both as a method (`service.run(…)`) and as an effect member (`yield* service.value`); dies either way. */
const unimplemented = (service: string, member: string) => {
  const death = Effect.die(new Error(`${service}.${member} is not implemented in this test`))
  const asMethod = () => death
  Object.assign(asMethod, death)
  Object.setPrototypeOf(asMethod, Object.getPrototypeOf(death))
  return asMethod
}
