import { CSV_LINE_END, type CsvLayout, type CsvRow, encodeCell } from "../../../domain/csv"
import type { ValueRow } from "../../usage/3-UsageLedger/contract"

/**
 * CSV lines of rows given as cell values in the layout's column order, which is the order the export
 * queries return their columns in (`services/usage/3-UsageLedger/exportQueries.ts`). Same cells as `encodeRows`, without
 * building an object per row first.
 */
export const encodeValueRows = (rows: ReadonlyArray<ValueRow>, layout: CsvLayout): string => {
  const { columns } = layout
  let chunk = ""
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]
    if (row === undefined) continue
    let line = ""
    for (let i = 0; i < columns.length; i++) {
      const cell = encodeCell(columns[i]!.kind, row[i])
      line += i === 0 ? cell : `,${cell}`
    }
    chunk += line + CSV_LINE_END
  }
  return chunk
}

/** A row as an object keyed by column name, for the transforms that work on named cells (privacy). */
export const namedRow = (row: ValueRow, layout: CsvLayout): CsvRow => {
  const named: Record<string, unknown> = {}
  layout.columns.forEach((column, index) => {
    named[column.name] = row[index]
  })
  return named
}
