/**
 * Exact decimals as PostgreSQL's numeric computes them, on bigints: what the in-memory backings need
 * to give the same costs and rates to the last digit.
 */

/** `round(num / den)` of numeric, half away from zero (num, den >= 0). */
export const roundedQuotient = (num: bigint, den: bigint): bigint => (2n * num + den) / (2n * den)

/** A number's exact decimal value (as its shortest text, which is what PostgreSQL parses) × 10^scale, rounded. */
export const scaled = (value: number, scale: number): bigint => {
  const [mantissa = "0", exponentText] = String(value).toLowerCase().split("e")
  const exponent = Number(exponentText ?? 0)
  const negative = mantissa.startsWith("-")
  const [whole = "0", fraction = ""] = (negative ? mantissa.slice(1) : mantissa).split(".")
  const digits = BigInt(`${whole}${fraction}` || "0")
  const shift = scale + exponent - fraction.length
  const magnitude = shift >= 0 ? digits * 10n ** BigInt(shift) : roundedQuotient(digits, 10n ** BigInt(-shift))
  return negative ? -magnitude : magnitude
}

/** A non-negative value × 10^scale written with `scale` decimals, as numeric of that scale prints. */
export const fixed = (value: bigint, scale: number): string => {
  const unit = 10n ** BigInt(scale)
  return `${value / unit}.${(value % unit).toString().padStart(scale, "0")}`
}
