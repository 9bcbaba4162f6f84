/** Customer-supplied provider keys: the same shapes in the admin API and the console API. */
import { Schema } from "effect"
import { strictParse } from "../../domain/workspaceSettings"

export const ProviderKeyView = Schema.Struct({
  provider: Schema.String,
  last4: Schema.String.annotations({ description: "The key's last four characters: all that is ever shown of it again." }),
  createdAt: Schema.String,
  createdBy: Schema.String.annotations({ description: "`operator` or the console member's email." }),
  lastUsedAt: Schema.NullOr(Schema.String),
  lastError: Schema.NullOr(Schema.String).annotations({ description: "The provider's last refusal of the key, in the service's words." })
}).annotations({ identifier: "ProviderKey" })

export const SetProviderKey = Schema.Struct({
  apiKey: Schema.String.pipe(
    Schema.minLength(8, { message: () => "apiKey must be at least 8 characters" }),
    Schema.maxLength(1000, { message: () => "apiKey must be at most 1000 characters" }),
    Schema.pattern(/^[\x21-\x7e]+$/, { message: () => "apiKey must be printable ASCII without spaces" })
  )
}).annotations({ identifier: "SetProviderKey", ...strictParse })

export const RotationResultView = Schema.Struct({
  resealed: Schema.Int.annotations({ description: "Keys re-encrypted under the current CREDENTIALS_KEY" }),
  unreadable: Schema.Array(Schema.Struct({ workspaceId: Schema.String, provider: Schema.String })).annotations({
    description: "Keys sealed under a key that is neither CREDENTIALS_KEY nor CREDENTIALS_KEY_PREVIOUS: left as they were"
  })
}).annotations({ identifier: "CredentialsRotation" })
