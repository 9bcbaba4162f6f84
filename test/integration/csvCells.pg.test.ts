/**
 * PostgreSQL's CSV text cell (sql/0017_usage_csv_cells.sql, used by the exports' CSV lines) against the
 * service's own (`encodeTextCell`, src/domain/csv.ts) on the same text: edge cases written out, then
 * thousands of random strings made of formula triggers, white space of every kind, quotes, separators
 * and any other character. In a UTF8 database and in a SQL_ASCII one (where PostgreSQL sees bytes).
 */
import { FastCheck as fc } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { encodeTextCell } from "../../src/domain/csv"

const functionSql = fs.readFileSync(path.join(import.meta.dirname, "../../sql/0017_usage_csv_cells.sql"), "utf8")

/** Characters the rules are about, and a few others that look like them. */
const special = [
  "=", "+", "-", "@", "\t", "\r", "\n", "\v", "\f", " ", ",", "\"", "'", "\u00a0", "\u1680", "\u180e",
  "\u2000", "\u2005", "\u200a", "\u200b", "\u200c", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
  "\uff1d", "\uff0b", "\uff0d", "\uff20", "\uff1e", "\x01", "\x1f", "a", "1", "é", "😀"
]

const anyCharacter = fc.integer({ min: 1, max: 0x10ffff })
  .filter((code) => code < 0xd800 || code > 0xdfff)
  .map((code) => String.fromCodePoint(code))

const cellText = fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...special) }, { weight: 1, arbitrary: anyCharacter }), { maxLength: 8 })
  .map((characters) => characters.join(""))

const edgeCases = [
  "", "=SUM(A1)", "+1", "-5", "@x", "\t=x", "\r", " =x", "  -x", "\u00a0=x", "\u1680=x", " \u1680=x", "\u2000+x",
  "\u200b@x", "\u3000\uff1dx", "\ufeff-x", "\uff0b1", "a=b", "a,b", "a\"b", "\"", "=a,b", "=\"x\"", "\n\n=x", " ",
  "\u00a0", "Helper, the", "=HYPERLINK(\"x\"),y", "line\r\nbreak", "😀=", "\u180e=x"
]

const admin = () => new pg.Client({ connectionString: inject("adminDatabaseUrl") })

describe("usage_csv_text", () => {
  const databases: Array<{ readonly encoding: string; readonly name: string; client?: pg.Client }> = [
    { encoding: "UTF8", name: `test_csv_utf8_${crypto.randomBytes(4).toString("hex")}` },
    { encoding: "SQL_ASCII", name: `test_csv_ascii_${crypto.randomBytes(4).toString("hex")}` }
  ]

  beforeAll(async () => {
    const client = admin()
    await client.connect()
    for (const database of databases) {
      await client.query(`CREATE DATABASE ${database.name} ENCODING '${database.encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`)
      const url = new URL(inject("adminDatabaseUrl"))
      url.pathname = `/${database.name}`
      database.client = new pg.Client({ connectionString: url.toString() })
      await database.client.connect()
      await database.client.query(functionSql)
    }
    await client.end()
  })

  afterAll(async () => {
    for (const database of databases) await database.client?.end()
  })

  for (const database of databases) {
    it(`writes every text as encodeTextCell does, in a ${database.encoding} database`, async () => {
      const client = database.client!
      expect((await client.query<{ e: string }>("SELECT current_setting('server_encoding') AS e")).rows[0]?.e).toBe(database.encoding)
      const texts = [...edgeCases, ...fc.sample(cellText, { numRuns: 5_000, seed: 25 })]
      const { rows } = await client.query<{ cell: string }>(
        "SELECT usage_csv_text(v) AS cell FROM unnest($1::text[]) WITH ORDINALITY AS t(v, i) ORDER BY i",
        [texts]
      )
      const differing = texts
        .map((text, i) => ({ text, sql: rows[i]?.cell, service: encodeTextCell(text) }))
        .filter((row) => row.sql !== row.service)
      expect(differing.slice(0, 10).map((row) => JSON.stringify(row))).toEqual([])
      expect(rows).toHaveLength(texts.length)
      // NULL is an empty cell, as the service writes null.
      expect((await client.query<{ cell: string }>("SELECT usage_csv_text(NULL) AS cell")).rows[0]?.cell).toBe("")
    })
  }
})
