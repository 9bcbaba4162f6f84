/**
 * CSV encoding (RFC 4180) with spreadsheet formula-injection neutralising.
 *
 * - Lines end with CRLF, the header line included; no byte-order mark; UTF-8 text is written as is.
 * - A cell is quoted when it contains a comma, a double quote, CR or LF; inner double quotes are doubled.
 * - Cells are typed by their column kind. Text and timestamp cells starting with = + - @ TAB or CR
 *   (the OWASP "CSV injection" list), their full-width forms ＝ ＋ － ＠, or any of them after leading
 *   white space, get a leading single quote, so a spreadsheet shows them as text.
 *   Integer and decimal cells are numbers we produce: they are written unaltered (a negative number
 *   stays `-5`), but a value that does not look like a plain number is encoded as a text cell.
 * - null and undefined give an empty cell.
 *
 * `encodeRows` is called once per database chunk (hundreds of rows) and returns one string: string
 * concatenation only, no per-cell arrays or buffers.
 */

export type CsvCellKind = "text" | "integer" | "decimal" | "timestamp"

export interface CsvColumn {
  /** The header name, and the property of a row that holds the cell value. */
  readonly name: string
  readonly kind: CsvCellKind
}

/** Anything with ordered columns; an export layout is one. */
export interface CsvLayout {
  readonly columns: ReadonlyArray<CsvColumn>
}

/** A row as returned by the database driver: column name → value. */
export type CsvRow = Readonly<Record<string, unknown>>

export const CSV_LINE_END = "\r\n"

const NEEDS_QUOTES = /[",\r\n]/
const DOUBLE_QUOTE = /"/g
// Plain decimal notation as PostgreSQL prints integers and numerics: no exponent, no leading '+'.
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/

const isFormulaTrigger = (charCode: number): boolean =>
  charCode === 61 /* = */ ||
  charCode === 43 /* + */ ||
  charCode === 45 /* - */ ||
  charCode === 64 /* @ */ ||
  charCode === 9 /* TAB */ ||
  charCode === 13 /* CR */ ||
  // Full-width forms, which some spreadsheets read as their ASCII signs.
  charCode === 0xff1d /* ＝ */ ||
  charCode === 0xff0b /* ＋ */ ||
  charCode === 0xff0d /* － */ ||
  charCode === 0xff20 /* ＠ */

/** Spreadsheets skip leading blanks before a formula: a space (or any white space) before a sign is no protection. */
const LEADING_BLANKS = /^[\s\u00a0\u2000-\u200b\u3000\ufeff]+/

/** Whether the cell would be read as a formula: a trigger first, or after leading blanks. */
const startsFormula = (text: string): boolean => {
  const first = text.charCodeAt(0)
  if (isFormulaTrigger(first)) return true
  // Only cells that start blank pay for the scan.
  if (first > 32 && first !== 0xa0 && first < 0x2000) return false
  const blanks = LEADING_BLANKS.exec(text)
  return blanks !== null && blanks[0].length < text.length && isFormulaTrigger(text.charCodeAt(blanks[0].length))
}

/** RFC 4180 quoting of an already neutralised cell text. */
export const quoteCell = (text: string): string =>
  NEEDS_QUOTES.test(text) ? `"${text.replace(DOUBLE_QUOTE, '""')}"` : text

/** A text cell: formula triggers neutralised with a leading `'`, then quoted when needed. */
export const encodeTextCell = (text: string): string => {
  if (text.length === 0) return text
  return quoteCell(startsFormula(text) ? `'${text}` : text)
}

const textOf = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined
  if (typeof value === "string") return value
  if (value instanceof Date) return value.toISOString()
  return String(value)
}

/** An integer or decimal cell: numbers are written as is, anything else goes through the text rules. */
export const encodeNumberCell = (value: unknown): string => {
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : ""
  if (typeof value === "bigint") return value.toString()
  if (typeof value === "string" && PLAIN_NUMBER.test(value)) return value
  const text = textOf(value)
  return text === undefined ? "" : encodeTextCell(text)
}

/** One cell of the given kind; null and undefined give an empty cell. */
export const encodeCell = (kind: CsvCellKind, value: unknown): string => {
  if (kind === "integer" || kind === "decimal") return encodeNumberCell(value)
  const text = textOf(value)
  return text === undefined ? "" : encodeTextCell(text)
}

/** The header line, CRLF-terminated. */
export const encodeHeader = ({ columns }: CsvLayout): string => {
  let line = ""
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]
    if (column === undefined) continue
    line += i === 0 ? encodeTextCell(column.name) : `,${encodeTextCell(column.name)}`
  }
  return line + CSV_LINE_END
}

/** One data line, CRLF-terminated. */
export const encodeRow = (row: CsvRow, { columns }: CsvLayout): string => {
  let line = ""
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]
    if (column === undefined) continue
    const cell = encodeCell(column.kind, row[column.name])
    line += i === 0 ? cell : `,${cell}`
  }
  return line + CSV_LINE_END
}

/** A chunk of data lines as one string, each CRLF-terminated. */
export const encodeRows = (rows: ReadonlyArray<CsvRow>, layout: CsvLayout): string => {
  let chunk = ""
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]
    if (row !== undefined) chunk += encodeRow(row, layout)
  }
  return chunk
}
