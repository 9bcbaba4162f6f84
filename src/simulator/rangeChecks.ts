// Schema filters whose failure messages read like the providers' validation messages.
import { Schema } from "effect"

/** A number within [minimum, maximum]. */
export const numberBetween = (minimum: number, maximum: number) =>
  Schema.Number.pipe(
    Schema.filter((n) =>
      n < minimum
        ? `decimal below minimum value. Expected a value >= ${minimum}, but got ${n} instead.`
        : n > maximum
          ? `decimal above maximum value. Expected a value <= ${maximum}, but got ${n} instead.`
          : true
    )
  )

/** An integer within [minimum, maximum]. */
export const integerBetween = (minimum: number, maximum = Number.MAX_SAFE_INTEGER) =>
  Schema.Number.pipe(
    Schema.filter((n) =>
      !Number.isInteger(n)
        ? `expected an integer, but got ${n} instead.`
        : n < minimum
          ? `integer below minimum value. Expected a value >= ${minimum}, but got ${n} instead.`
          : n > maximum
            ? `integer above maximum value. Expected a value <= ${maximum}, but got ${n} instead.`
            : true
    )
  )

/** An array of at most `maximum` items. */
export const arrayAtMost = <S extends Schema.Schema.Any>(item: S, maximum: number) =>
  Schema.Array(item).pipe(
    Schema.filter((items) =>
      items.length > maximum
        ? `array too long. Expected an array with maximum length ${maximum}, but got an array with length ${items.length} instead.`
        : true
    )
  )

/** An array of at least `minimum` items. */
export const arrayAtLeast = <S extends Schema.Schema.Any>(item: S, minimum: number) =>
  Schema.Array(item).pipe(
    Schema.filter((items) =>
      items.length < minimum
        ? items.length === 0
          ? `empty array. Expected an array with minimum length ${minimum}, but got an empty array instead.`
          : `array too short. Expected an array with minimum length ${minimum}, but got an array with length ${items.length} instead.`
        : true
    )
  )
