import { Schema } from "effect"
import { providerIds } from "./providerId"

/** A provider name at a boundary (a path segment, a command's argument, a stored record). */
export const ProviderIdSchema = Schema.Literal(...providerIds)
