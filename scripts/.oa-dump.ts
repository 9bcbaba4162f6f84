import { OpenApi } from "@effect/platform"
import { writeFileSync } from "node:fs"
import { validate } from "@readme/openapi-parser"
import { WorkspaceApi } from "../src/api/Api"
const spec = OpenApi.fromApi(WorkspaceApi) as any
let ops = 0, statuses = 0
for (const [p, methods] of Object.entries<any>(spec.paths)) for (const [m, op] of Object.entries<any>(methods)) {
  ops++; const s = Object.keys(op.responses); statuses += s.length
  if (process.argv[3]) console.log(m.toUpperCase(), p, op.tags?.join(","), "summary:", !!op.summary, "desc:", !!op.description, s.join(" "))
}
console.log("operations", ops, "responses", statuses)
writeFileSync(process.argv[2] ?? "/tmp/oa/out.json", JSON.stringify(spec, null, 2))
const result = await validate(JSON.parse(JSON.stringify(spec)))
console.log(JSON.stringify(result, null, 1).slice(0, 3000))
