import { Data, Effect, Either, Option } from "effect"
import { resolveZone } from "../domain/datePoint"
import { EXPORT_KINDS, type ExportKind, isExportKind } from "../domain/exportLayouts"
import { postJson } from "./adminCall"
import { defaultDemoOptions, type DemoOptions } from "./demoData"
import { runExport } from "./export"
import { seedWorkspace } from "./seed"

/** Bad command-line input; printed as is. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

export const usageCommandsHelp = `  seed WORKSPACE_ID [--events N] [--users N] [--days N] [--start YYYY-MM-DD] [--timezone ZONE] [--seed N]
      demo activity: users, assistants, projects, workflows, messages and workflow runs with a daily
      and weekly rhythm (default ${defaultDemoOptions.events.toLocaleString("en")} events, ${defaultDemoOptions.users} users, ${defaultDemoOptions.days} days from ${defaultDemoOptions.startDate}, ${defaultDemoOptions.zone})
  export ${EXPORT_KINDS.join("|")} (--key API_KEY | --workspace WORKSPACE_ID) --from DATE --to DATE
      [--timezone ZONE] [--output FILE]
      runs a usage export (dates are local wall times in ZONE, default UTC); --workspace runs it as the
      operator through the admin API (no key is made); --output also downloads the CSV`

/** The --options of seed and export (all take a value). */
export const usageCommandOptions = ["events", "users", "days", "start", "timezone", "seed", "key", "workspace", "from", "to", "output"]

export type OptionValue = (name: string) => string | undefined

const positiveInt = (value: string | undefined, name: string, fallback: number, maximum: number) => {
  if (value === undefined) return Effect.succeed(fallback)
  const parsed = Number(value.replaceAll("_", ""))
  return Number.isInteger(parsed) && parsed > 0 && parsed <= maximum
    ? Effect.succeed(parsed)
    : Effect.fail(new UsageError({ message: `--${name}: a whole number from 1 to ${maximum.toLocaleString("en")}` }))
}

const zone = (value: string | undefined, fallback: string) =>
  Either.match(resolveZone(value ?? fallback, "--timezone"), {
    onLeft: (error) => Effect.fail(new UsageError({ message: `--timezone: ${error.message}` })),
    onRight: Effect.succeed
  })

const demoOptions = (option: OptionValue) =>
  Effect.gen(function*() {
    const start = option("start") ?? defaultDemoOptions.startDate
    if (!/^\d{4}-\d{2}-\d{2}$/.test(start) || Number.isNaN(Date.parse(start))) {
      return yield* Effect.fail(new UsageError({ message: "--start: a date such as 2026-01-01" }))
    }
    const options: DemoOptions = {
      ...defaultDemoOptions,
      events: yield* positiveInt(option("events"), "events", defaultDemoOptions.events, 100_000_000),
      users: yield* positiveInt(option("users"), "users", defaultDemoOptions.users, 10_000_000),
      days: yield* positiveInt(option("days"), "days", defaultDemoOptions.days, 3_660),
      seed: yield* positiveInt(option("seed"), "seed", defaultDemoOptions.seed, 2 ** 31),
      startDate: start,
      zone: yield* zone(option("timezone"), defaultDemoOptions.zone)
    }
    return options
  })

const required = (value: string | undefined, what: string) =>
  value === undefined || value === "" ? Effect.fail(new UsageError({ message: `missing ${what}` })) : Effect.succeed(value)

/** `seed WORKSPACE_ID [options]` */
export const seedCommand = (args: {
  readonly baseUrl: string
  readonly adminToken: string
  readonly workspaceId: string | undefined
  readonly option: OptionValue
}) =>
  Effect.gen(function*() {
    const workspaceId = yield* required(args.workspaceId, "WORKSPACE_ID")
    const options = yield* demoOptions(args.option)
    return yield* seedWorkspace({ baseUrl: args.baseUrl, adminToken: args.adminToken, workspaceId, options })
  })

/** A date point as the export endpoints take it. */
interface DatePoint {
  readonly date: string
  readonly timezone: string
}

/**
 * `export KIND ...`: with --key through the public endpoint; with --workspace as the operator, through the
 * admin API (nothing is created for the run, so nothing is left behind).
 */
export const exportCommand = <E, R>(args: {
  readonly baseUrl: string
  readonly kind: string | undefined
  readonly option: OptionValue
  /** The operator's own export of a workspace (the admin API): no key of the workspace is made for it. */
  readonly operatorExport: (
    workspaceId: string,
    kind: ExportKind,
    range: { readonly from: DatePoint; readonly to: DatePoint }
  ) => Effect.Effect<unknown, E, R>
}) =>
  Effect.gen(function*() {
    const kind = yield* required(args.kind, `the export kind (${EXPORT_KINDS.join(", ")})`)
    if (!isExportKind(kind)) return yield* Effect.fail(new UsageError({ message: `unknown export kind ${kind}: ${EXPORT_KINDS.join(", ")}` }))
    const timezone = yield* zone(args.option("timezone"), "UTC")
    const from = { date: yield* required(args.option("from"), "--from"), timezone }
    const to = { date: yield* required(args.option("to"), "--to"), timezone }
    const output = args.option("output")
    const key = Option.fromNullable(args.option("key") ?? process.env.WORKSPACE_API_KEY)
    if (Option.isSome(key)) {
      const body = JSON.stringify({ from, to })
      return yield* runExport({ kind, output, request: postJson(`${args.baseUrl}/export/${kind}`, key.value, body, "apiKey") })
    }
    const workspaceId = yield* required(args.option("workspace"), "--key API_KEY (or WORKSPACE_API_KEY) or --workspace WORKSPACE_ID")
    return yield* runExport({ kind, output, request: args.operatorExport(workspaceId, kind, { from, to }) })
  })
