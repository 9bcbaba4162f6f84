-- A text (or timestamp) cell of an export's CSV, exactly as src/domain/csv.ts `encodeTextCell` writes it, so that
-- PostgreSQL can hand the service finished CSV lines (src/services/usage/3-UsageLedger/exportQueries.ts, `exportCsvStatement`) and the
-- service's event loop only joins them:
-- * NULL and '' give an empty cell;
-- * a formula trigger first (= + - @ TAB CR, or the full-width U+FF1D U+FF0B U+FF0D U+FF20), or after a run of
--   white space (JavaScript's \s with U+200B: TAB LF VT FF CR space U+00A0 U+1680 U+2000–U+200B U+2028 U+2029
--   U+202F U+205F U+3000 U+FEFF) that does not start with U+1680 (the JavaScript side takes such a first
--   character for an ordinary one), gets a leading single quote;
-- * a cell with a comma, a double quote, CR or LF is quoted, inner double quotes doubled.
-- Non-ASCII characters are written as their UTF-8 bytes (E'\x..', continued on the next lines) and matched as
-- sequences, never inside brackets: the same in a UTF8 database and in a SQL_ASCII one (an initdb without a
-- UTF-8 locale), where text is bytes. SQL-language and immutable, with one expression: the planner inlines it
-- into the export query.
-- test/integration/csvCells.pg.test.ts checks it against encodeTextCell on random text.
CREATE FUNCTION usage_csv_text(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN value IS NULL THEN ''
    WHEN value ~ E'^(?:[=+@\t\r-]|\xef\xbc\x9d|\xef\xbc\x8b|\xef\xbc\x8d|\xef\xbc\xa0)'
      OR (value ~ (E'^(?:[\t\n\x0b\x0c\r ]|\xc2\xa0|\xe1\x9a\x80'
                   '|\xe2\x80\x80|\xe2\x80\x81|\xe2\x80\x82|\xe2\x80\x83|\xe2\x80\x84|\xe2\x80\x85'
                   '|\xe2\x80\x86|\xe2\x80\x87|\xe2\x80\x88|\xe2\x80\x89|\xe2\x80\x8a|\xe2\x80\x8b'
                   '|\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xaf|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf)+'
                   '(?:[=+@-]|\xef\xbc\x9d|\xef\xbc\x8b|\xef\xbc\x8d|\xef\xbc\xa0)')
          AND value NOT LIKE E'\xe1\x9a\x80%')
    THEN CASE WHEN value ~ '[",\r\n]' THEN '"''' || replace(value, '"', '""') || '"' ELSE '''' || value END
    ELSE CASE WHEN value ~ '[",\r\n]' THEN '"' || replace(value, '"', '""') || '"' ELSE value END
  END
$$;
