/**
 * A request schema decoded in one pass: its structs' property transformations (`optionalParam`, i.e.
 * `Schema.optionalWith(X, { exact: true, nullable: true })`, and optional members with a default) are applied
 * in one step instead of a transformation each.
 *
 * Why: Effect turns a struct with such members into a transformation from a struct of `X | null` members to
 * a struct of `X` members. Decoding it decodes the first struct, then maps an Option and an Either per member,
 * then checks the whole second struct again (nested structs included): about half of what a chat request's
 * decode allocates. Here the first struct is decoded as before, and one step removes its null members (or puts
 * in the defaults) on its fresh output, which is what the property transformations produce; the second pass
 * would only check again values the first decoded. Failures come from the same first struct, so every error
 * (path, message, union members tried) is the same.
 *
 * For decoding request bodies only: the result cannot encode.
 */
import { Option, ParseResult, Schema, SchemaAST as AST } from "effect"

/** Decodes like `schema`, to the same values and with the same errors, in one pass. */
export const onePassDecoding = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, unknown, R> => {
  // Same type by construction (the same decoded values: test/domain/onePassDecoding.test.ts compares them); the
  // encoded side is left unknown since the result only decodes. A schema with nothing to rewrite keeps its node.
  return Schema.make<A, unknown, R>(rewrite(schema.ast, new Map()))
}

/** A struct's one-pass transformation: prints as the struct it replaces, since default messages print the schema. */
class PropertiesInPlace extends AST.Transformation {
  constructor(from: AST.TypeLiteral, plan: Plan, private readonly original: AST.Transformation) {
    super(
      from,
      AST.unknownKeyword,
      new AST.FinalTransformation(
        (decoded: Record<PropertyKey, unknown>) => ParseResult.succeed(applied(decoded, plan)),
        () => ParseResult.fail(new ParseResult.Forbidden(original, undefined, "decoding only"))
      ),
      original.annotations
    )
  }
  override toString(): string {
    return String(this.original)
  }
}

/** What the struct's property transformations do, read once. */
interface Plan {
  /** The struct's properties in its order (the decoded object's order). */
  readonly names: ReadonlyArray<PropertyKey>
  /** Keys whose null means absent: most requests hold none of them, and then nothing is done. */
  readonly nullAsAbsent: ReadonlyArray<PropertyKey>
  /** Other transformations of a key's presence (a default for an absent or null value). */
  readonly others: ReadonlyMap<PropertyKey, AST.PropertySignatureTransformation["decode"]>
}

const hasOwn = (object: object, key: PropertyKey): boolean => Object.prototype.hasOwnProperty.call(object, key)

/**
 * The decoded object as the property transformations leave it, in the order the struct's second pass would give
 * (its properties in order, then the other members). The object is the first pass's fresh output: returned as is
 * when no transformation changes it.
 */
const applied = (decoded: Record<PropertyKey, unknown>, plan: Plan): Record<PropertyKey, unknown> => {
  let changes: Map<PropertyKey, Option.Option<unknown>> | undefined
  for (const key of plan.nullAsAbsent) {
    if (decoded[key] === null) (changes ??= new Map()).set(key, Option.none())
  }
  for (const [key, decode] of plan.others) {
    const had = hasOwn(decoded, key)
    const result = decode(had ? Option.some(decoded[key]) : Option.none())
    if (Option.isSome(result) ? !had || result.value !== decoded[key] : had) (changes ??= new Map()).set(key, result)
  }
  if (changes === undefined) return decoded
  const out: Record<PropertyKey, unknown> = {}
  for (const name of plan.names) {
    const change = changes.get(name)
    if (change === undefined) {
      if (hasOwn(decoded, name)) out[name] = decoded[name]
    } else if (Option.isSome(change)) {
      out[name] = change.value
    }
  }
  for (const key of Reflect.ownKeys(decoded)) {
    if (!plan.names.includes(key)) out[key] = decoded[key]
  }
  return out
}

const probe = { probe: true }

/**
 * A transformation of presence only: the same key on both sides, and a value that is neither absent nor null kept
 * as it is (so the second pass would only check again what the first decoded). Recognised by what it does.
 */
const keepsValues = (pst: AST.PropertySignatureTransformation): boolean => {
  if (pst.from !== pst.to) return false
  const ofValue = pst.decode(Option.some(probe))
  return Option.isSome(ofValue) && ofValue.value === probe
}

/** `optionalWith(X, { exact: true, nullable: true })`: absent stays absent, null becomes absent. */
const isNullAsAbsent = (pst: AST.PropertySignatureTransformation): boolean =>
  Option.isNone(pst.decode(Option.some(null))) && Option.isNone(pst.decode(Option.none()))

/** The struct transformation's plan, or undefined when it does more than decide a key's presence. */
const planOf = (ast: AST.Transformation): Plan | undefined => {
  const { from, to, transformation } = ast
  if (!AST.isTypeLiteralTransformation(transformation) || !AST.isTypeLiteral(from) || !AST.isTypeLiteral(to)) {
    return undefined
  }
  const psts = transformation.propertySignatureTransformations
  if (!psts.every(keepsValues)) return undefined
  const names = from.propertySignatures.map((ps) => ps.name)
  const toNames = to.propertySignatures.map((ps) => ps.name)
  if (names.length !== toNames.length || names.some((name, i) => name !== toNames[i])) return undefined
  return {
    names,
    nullAsAbsent: psts.filter(isNullAsAbsent).map((pst) => pst.from),
    others: new Map(psts.filter((pst) => !isNullAsAbsent(pst)).map((pst) => [pst.from, pst.decode]))
  }
}

/** The node with its structs' property transformations replaced; the same node when there are none below it. */
const rewrite = (ast: AST.AST, seen: Map<AST.AST, AST.AST>): AST.AST => {
  const known = seen.get(ast)
  if (known !== undefined) return known
  const result = rewriteNode(ast, seen)
  seen.set(ast, result)
  return result
}

const rewriteNode = (ast: AST.AST, seen: Map<AST.AST, AST.AST>): AST.AST => {
  const go = (node: AST.AST) => rewrite(node, seen)
  switch (ast._tag) {
    case "Transformation": {
      const from = go(ast.from)
      const plan = planOf(ast)
      if (plan !== undefined && AST.isTypeLiteral(from)) return new PropertiesInPlace(from, plan, ast)
      const to = go(ast.to)
      return from === ast.from && to === ast.to
        ? ast
        : new AST.Transformation(from, to, ast.transformation, ast.annotations)
    }
    case "Refinement": {
      const from = go(ast.from)
      return from === ast.from ? ast : new AST.Refinement(from, ast.filter, ast.annotations)
    }
    case "Union": {
      const types = ast.types.map(go)
      return types.every((type, i) => type === ast.types[i]) ? ast : AST.Union.make(types, ast.annotations)
    }
    case "TupleType": {
      const elements = ast.elements.map((e) => {
        const type = go(e.type)
        return type === e.type ? e : new AST.OptionalType(type, e.isOptional, e.annotations)
      })
      const rest = ast.rest.map((r) => {
        const type = go(r.type)
        return type === r.type ? r : new AST.Type(type, r.annotations)
      })
      return elements.every((e, i) => e === ast.elements[i]) && rest.every((r, i) => r === ast.rest[i])
        ? ast
        : new AST.TupleType(elements, rest, ast.isReadonly, ast.annotations)
    }
    case "TypeLiteral": {
      const properties = ast.propertySignatures.map((ps) => {
        const type = go(ps.type)
        return type === ps.type ? ps : new AST.PropertySignature(ps.name, type, ps.isOptional, ps.isReadonly, ps.annotations)
      })
      const indexes = ast.indexSignatures.map((is) => {
        const type = go(is.type)
        return type === is.type ? is : new AST.IndexSignature(is.parameter, type, is.isReadonly)
      })
      return properties.every((ps, i) => ps === ast.propertySignatures[i]) &&
          indexes.every((is, i) => is === ast.indexSignatures[i])
        ? ast
        : new AST.TypeLiteral(properties, indexes, ast.annotations)
    }
    case "Suspend": {
      // Rewritten when first decoded (a recursive schema refers to itself); `seen` ends the recursion.
      return new AST.Suspend(() => go(ast.f()), ast.annotations)
    }
    default:
      return ast
  }
}
