// The routes file's parser, in a module of its own so that src/upstreamsFile.ts imports it (and the YAML package,
// ~0.16 MB of script) only when UPSTREAMS_FILE is set: a service configured by variables never loads it.
import { parseDocument } from "yaml"

/** YAML or JSON (YAML 1.2 reads JSON), a key given twice an error; src/domain/routesFile.ts reads the result. */
export const parseRoutesFile = (text: string) => parseDocument(text, { uniqueKeys: true })
