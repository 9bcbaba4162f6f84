// A value that satisfies a JSON Schema: simulated tool arguments and structured outputs.
import type { Random } from "./deterministic"
import { generateProse } from "./textGenerator"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const maxDepth = 8

/** Resolves local references ("#/$defs/Name", "#/definitions/Name") against the root schema. */
const resolve = (schema: JsonObject, root: JsonObject): JsonObject => {
  const ref = schema["$ref"]
  if (typeof ref !== "string" || !ref.startsWith("#/")) return schema
  let target: unknown = root
  for (const segment of ref.slice(2).split("/")) {
    target = isObject(target) ? target[segment.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined
  }
  return isObject(target) ? target : {}
}

const sampleString = (schema: JsonObject, random: Random): string => {
  switch (schema["format"]) {
    case "date-time":
      return new Date(Date.UTC(2025, random.int(0, 11), random.int(1, 28), random.int(0, 23))).toISOString()
    case "date":
      return `2025-${String(random.int(1, 12)).padStart(2, "0")}-${String(random.int(1, 28)).padStart(2, "0")}`
    case "email":
      return `user${random.int(1, 999)}@example.com`
    case "uri":
    case "url":
      return `https://example.com/${random.int(1, 999)}`
    case "uuid":
      return "00000000-0000-4000-8000-" + String(random.int(0, 999_999_999)).padStart(12, "0")
  }
  const text = generateProse(random, random.int(1, 4)).replace(/\.$/, "")
  const minLength = typeof schema["minLength"] === "number" ? schema["minLength"] : 0
  const maxLength = typeof schema["maxLength"] === "number" ? schema["maxLength"] : Infinity
  return text.padEnd(minLength, "x").slice(0, maxLength)
}

const sampleNumber = (schema: JsonObject, random: Random, integer: boolean): number => {
  const minimum = typeof schema["minimum"] === "number" ? schema["minimum"] : 0
  const maximum = typeof schema["maximum"] === "number" ? schema["maximum"] : minimum + 100
  return integer
    ? random.int(Math.ceil(minimum), Math.floor(maximum))
    : Math.round((minimum + random.next() * (maximum - minimum)) * 100) / 100
}

const sample = (raw: unknown, root: JsonObject, random: Random, depth: number): Json => {
  if (!isObject(raw) || depth > maxDepth) return null
  const schema = resolve(raw, root)
  if ("const" in schema) return toJson(schema["const"])
  const choices = schema["enum"]
  if (Array.isArray(choices) && choices.length > 0) return toJson(choices[random.int(0, choices.length - 1)])
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key]
    if (Array.isArray(options) && options.length > 0) return sample(options[0], root, random, depth + 1)
  }
  const allOf = schema["allOf"]
  if (Array.isArray(allOf) && allOf.length > 0) {
    return sample(Object.assign({}, ...allOf.filter(isObject).map((part) => resolve(part, root))), root, random, depth + 1)
  }
  const declared = schema["type"]
  const type = Array.isArray(declared) ? declared.find((t) => t !== "null") ?? "null" : declared
  switch (type ?? (isObject(schema["properties"]) ? "object" : undefined)) {
    case "string":
      return sampleString(schema, random)
    case "integer":
      return sampleNumber(schema, random, true)
    case "number":
      return sampleNumber(schema, random, false)
    case "boolean":
      return random.chance(0.5)
    case "null":
      return null
    case "array": {
      const minItems = typeof schema["minItems"] === "number" ? schema["minItems"] : 1
      const maxItems = typeof schema["maxItems"] === "number" ? schema["maxItems"] : Math.max(minItems, 3)
      const length = random.int(minItems, Math.max(minItems, Math.min(maxItems, minItems + 2)))
      return Array.from({ length }, () => sample(schema["items"] ?? {}, root, random, depth + 1))
    }
    case "object": {
      const properties = isObject(schema["properties"]) ? schema["properties"] : {}
      const required = Array.isArray(schema["required"]) ? schema["required"] : []
      const result: Record<string, Json> = {}
      for (const [name, propertySchema] of Object.entries(properties)) {
        // Strict structured outputs list every property as required; optional ones appear half the time.
        if (required.includes(name) || random.chance(0.5)) {
          result[name] = sample(propertySchema, root, random, depth + 1)
        }
      }
      return result
    }
    default:
      return generateProse(random, random.int(1, 4)).replace(/\.$/, "")
  }
}

const toJson = (value: unknown): Json => JSON.parse(JSON.stringify(value ?? null)) as Json

/** A sample value satisfying the common keywords of `schema` (types, enum, const, properties, items, $ref). */
export const sampleJsonSchema = (schema: unknown, random: Random): Json =>
  sample(schema, isObject(schema) ? schema : {}, random, 0)
