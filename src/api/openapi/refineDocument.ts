import { HttpApi, HttpApiSchema } from "@effect/platform"
import { Context, Option, SchemaAST } from "effect"
import { STATUS_CODES } from "node:http"
import { Choices, type DocumentedChoices, type DocumentedFamily, OperationFamily, PassesUpstreamRefusals, RequestExample } from "./annotations"
import { errorExample, errorFormatsByComponent } from "./errorExamples"

// HttpApi generates the document from the schemas; this pass adds what schemas cannot say (tags per
// family, examples, documented enums, the upstream's pass-through) and keeps of each operation's
// errors only those it declares (its group, its middleware, itself). The API's own errors are for
// the one error encoder (every format at every status), not answers of every operation; among them
// HttpApi's decode error, which this service never answers: it renders decode failures in each
// family's format (src/api/requestProblems.ts).

type Json = { [key: string]: unknown }
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const jsonAt = (value: Json, key: string): Json | undefined => (isJson(value[key]) ? value[key] : undefined)

const componentPrefix = "#/components/schemas/"

/** The statuses an operation declares, each with the components of its bodies ("" for a body without one). */
type DeclaredErrors = ReadonlyMap<string, ReadonlySet<string>>

interface OperationFacts {
  readonly errors: DeclaredErrors
  readonly family: DocumentedFamily | undefined
  readonly example: Option.Option<unknown>
  readonly choices: DocumentedChoices | undefined
  readonly passesUpstream: boolean
}

/** `post /provider_a/{region}/v1/chat/completions`: how an endpoint's operation is keyed in the document. */
const operationKey = (method: string, path: string) => `${method.toLowerCase()} ${path.replace(/:(\w+)\??/g, "{$1}")}`

/** The component a body is documented as: the encoded side's identifier, as HttpApi's generator names it. */
const componentOf = (ast: SchemaAST.AST): string => {
  const identifier = SchemaAST.getJSONIdentifier(ast)
  if (Option.isSome(identifier)) return identifier.value
  return SchemaAST.isTransformation(ast) ? componentOf(ast.from) : ""
}

/** The errors of an endpoint's group (its middleware's included) and of the endpoint itself, by status. */
const declaredErrors = (...declarations: ReadonlyArray<{ readonly ast: SchemaAST.AST }>): DeclaredErrors => {
  const members = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
    SchemaAST.isUnion(ast) ? ast.types.flatMap(members) : SchemaAST.isNeverKeyword(ast) ? [] : [ast]
  const byStatus = new Map<string, Set<string>>()
  for (const member of declarations.flatMap((declared) => members(declared.ast))) {
    const status = String(HttpApiSchema.getStatusErrorAST(member))
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(componentOf(member)))
  }
  return byStatus
}

const factsOf = (api: HttpApi.HttpApi.Any): ReadonlyMap<string, OperationFacts> => {
  const facts = new Map<string, OperationFacts>()
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      facts.set(operationKey(endpoint.method, endpoint.path), {
        errors: declaredErrors(group.errorSchema, endpoint.errorSchema),
        family: Option.getOrUndefined(Context.getOption(mergedAnnotations, OperationFamily)),
        example: Context.getOption(mergedAnnotations, RequestExample),
        choices: Option.getOrUndefined(Context.getOption(mergedAnnotations, Choices)),
        passesUpstream: Option.isSome(Context.getOption(mergedAnnotations, PassesUpstreamRefusals))
      })
    }
  })
  return facts
}

/** The members of a response schema: itself, or those of its anyOf. */
const membersOf = (schema: Json): ReadonlyArray<Json> =>
  Array.isArray(schema.anyOf) ? schema.anyOf.filter(isJson) : [schema]

/**
 * Error answers: only the bodies the operation declares at each status (a status it does not declare
 * goes), each answer described by its status and given an example in its format. Returns the
 * component of the operation's error format, when its errors have one.
 */
const refineErrors = (responses: Json, declared: DeclaredErrors): string | undefined => {
  let format: string | undefined
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) < 400 || !isJson(response)) continue
    const own = declared.get(status)
    const media = jsonAt(jsonAt(response, "content") ?? {}, "application/json")
    if (media === undefined) {
      // An answer without a body: kept when declared.
      if (own === undefined) delete responses[status]
      continue
    }
    const schema = jsonAt(media, "schema")
    const kept = schema === undefined ? [] : membersOf(schema).filter((member) =>
      own?.has(typeof member.$ref === "string" ? member.$ref.slice(componentPrefix.length) : "") === true
    )
    const [only] = kept
    if (only === undefined) {
      delete responses[status]
      continue
    }
    media.schema = kept.length === 1 ? only : { anyOf: kept }
    // 529 is the messages protocol's own "overloaded", unknown to Node's table.
    if (response.description === "Error") response.description = STATUS_CODES[status] ?? "Overloaded"
    const ref = kept.length === 1 && typeof only.$ref === "string" ? only.$ref : undefined
    const documented = ref === undefined ? undefined : errorFormatsByComponent.get(ref.slice(componentPrefix.length))
    if (ref !== undefined && documented !== undefined) {
      media.example = errorExample(documented, Number(status))
      format = ref
    }
  }
  return format
}

/** A string schema (or the string member of a nullable one) with its documented values. */
const withEnum = (schema: Json, values: ReadonlyArray<string>): Json =>
  Array.isArray(schema.anyOf)
    ? { ...schema, anyOf: schema.anyOf.map((member) => (isJson(member) && member.type === "string" ? { ...member, enum: values } : member)) }
    : { ...schema, enum: values }

const documentChoices = (operation: Json, choices: DocumentedChoices, components: Json) => {
  for (const parameter of Array.isArray(operation.parameters) ? operation.parameters.filter(isJson) : []) {
    const values = parameter.in === "path" && typeof parameter.name === "string" ? choices.path?.[parameter.name] : undefined
    const schema = jsonAt(parameter, "schema")
    if (values !== undefined && schema !== undefined) parameter.schema = withEnum(schema, values)
  }
  const media = jsonAt(jsonAt(jsonAt(operation, "requestBody") ?? {}, "content") ?? {}, "application/json")
  const schema = media === undefined ? undefined : jsonAt(media, "schema")
  const body = typeof schema?.$ref === "string" ? jsonAt(components, schema.$ref.slice(componentPrefix.length)) : schema
  const properties = body === undefined ? undefined : jsonAt(body, "properties")
  for (const [field, values] of Object.entries(choices.body ?? {})) {
    const property = properties === undefined ? undefined : jsonAt(properties, field)
    if (properties !== undefined && property !== undefined) properties[field] = withEnum(property, values)
  }
}

/** The components reachable from the operations: the others (the decode error's) go. */
const pruneComponents = (spec: Json, components: Json) => {
  const reached = new Set<string>()
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit)
    if (!isJson(value)) return
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string" && inner.startsWith(componentPrefix)) {
        const name = inner.slice(componentPrefix.length)
        if (!reached.has(name)) {
          reached.add(name)
          visit(components[name])
        }
      } else visit(inner)
    }
  }
  visit(spec.paths)
  for (const name of Object.keys(components)) if (!reached.has(name)) delete components[name]
}

/** The OpenAPI transform of an API: its operations refined from their annotations (src/api/openapi/annotations.ts). */
export const refineDocument = (api: HttpApi.HttpApi.Any) => (generated: Record<string, unknown>): Record<string, unknown> => {
  const facts = factsOf(api)
  const spec: Json = structuredClone(generated)
  const components = jsonAt(jsonAt(spec, "components") ?? {}, "schemas") ?? {}
  const tags = new Map<string, DocumentedFamily | undefined>()
  for (const [path, item] of Object.entries(jsonAt(spec, "paths") ?? {})) {
    for (const [method, operation] of Object.entries(isJson(item) ? item : {})) {
      if (!isJson(operation)) continue
      const fact = facts.get(operationKey(method, path))
      if (fact?.family !== undefined) operation.tags = [fact.family.name]
      for (const tag of Array.isArray(operation.tags) ? operation.tags : []) {
        if (typeof tag === "string" && !tags.has(tag)) tags.set(tag, fact?.family)
      }
      const responses = jsonAt(operation, "responses") ?? {}
      const format = refineErrors(responses, fact?.errors ?? new Map())
      if (fact?.passesUpstream === true && format !== undefined) {
        const documented = errorFormatsByComponent.get(format.slice(componentPrefix.length))
        responses["4XX"] = {
          description: "The upstream provider's refusal of the request, passed through with its status and message.",
          content: { "application/json": { schema: { $ref: format }, ...(documented ? { example: errorExample(documented, 422) } : {}) } }
        }
      }
      const media = jsonAt(jsonAt(jsonAt(operation, "requestBody") ?? {}, "content") ?? {}, "application/json")
      if (fact !== undefined && Option.isSome(fact.example) && media !== undefined) media.example = fact.example.value
      if (fact?.choices !== undefined) documentChoices(operation, fact.choices, components)
    }
  }
  spec.tags = [...tags].map(([name, family]) => (family === undefined ? { name } : { name, description: family.description }))
  pruneComponents(spec, components)
  return spec
}
