// The length of a value's JSON text, without making the text: estimates that go by characters (four a token)
// need only the count, and a body of megabytes is not copied once more to get it.

/** What JSON escapes in a string (surrogates included: a lone one is escaped, a pair is not). */
const escaped = /["\\\u0000-\u001f\ud800-\udfff]/

/** Characters JSON.stringify writes for a string: its quotes, and its escapes (`\n`, `\"`, `\u0001`, lone surrogates). */
const stringLength = (text: string): number => {
  let length = text.length + 2
  // Most text has nothing to escape: one native scan says so.
  if (!escaped.test(text)) return length
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) length += 1
    else if (code < 0x20) length += 5
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(at + 1)
      // A pair is written as it is; a lone surrogate as \udxxx.
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) at += 1
      else length += 5
    }
  }
  return length
}

/**
 * `JSON.stringify(value, replacer).length` for JSON-like values (what a decoded request body holds), computed
 * without the text. `replace` stands for the replacer of the callers that need one: applied to every object
 * before it is measured. Recursive: for values already checked for depth (jsonDepth).
 */
export const jsonLength = (value: unknown, replace: (value: object) => object = (same) => same): number => {
  switch (typeof value) {
    case "string":
      return stringLength(value)
    case "number":
      return Number.isFinite(value) ? String(value).length : 4
    case "boolean":
      return value ? 4 : 5
    case "object": {
      if (value === null) return 4
      if ("toJSON" in value && typeof value.toJSON === "function") return JSON.stringify(value).length
      const replaced = replace(value)
      if (Array.isArray(replaced)) {
        let length = 2 + Math.max(0, replaced.length - 1)
        for (const item of replaced) length += item === undefined || typeof item === "function" || typeof item === "symbol" ? 4 : jsonLength(item, replace)
        return length
      }
      let length = 2
      let members = 0
      for (const [key, item] of Object.entries(replaced)) {
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue
        length += stringLength(key) + 1 + jsonLength(item, replace)
        members += 1
      }
      return length + Math.max(0, members - 1)
    }
    default:
      return 0
  }
}
