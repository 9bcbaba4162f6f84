/** One sample line of the Prometheus text format. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Scrape {
  readonly samples: ReadonlyArray<Sample>
  /** Metric families by name, with their declared TYPE. */
  readonly types: ReadonlyMap<string, string>
  /** The sum of the samples named `name` whose labels include `labels`. */
  readonly sum: (name: string, labels?: Readonly<Record<string, string>>) => number
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/g

/**
 * A strict reader of the text format (version 0.0.4): every line is a HELP, a TYPE or a sample whose
 * family was declared; anything else throws, so that a test fails on a malformed exposition.
 */
export const parsePrometheusText = (text: string): Scrape => {
  const samples: Array<Sample> = []
  const types = new Map<string, string>()
  for (const line of text.split("\n")) {
    if (line === "") continue
    const typed = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (typed) {
      types.set(typed[1]!, typed[2]!)
      continue
    }
    if (/^# HELP \S+ /.test(line)) continue
    const match = sampleLine.exec(line)
    if (match === null) throw new Error(`not a Prometheus text line: ${line}`)
    const [, name, labelText, value] = match as unknown as [string, string, string | undefined, string]
    const family = types.has(name) ? name : name.replace(/_(bucket|sum|count)$/, "")
    if (!types.has(family)) throw new Error(`sample of an undeclared family: ${line}`)
    const labels: Record<string, string> = {}
    if (labelText !== undefined && labelText !== "") {
      const consumed = [...labelText.matchAll(labelPair)]
      if (consumed.map((m) => m[0]).join("") !== labelText) throw new Error(`malformed labels: ${line}`)
      for (const m of consumed) labels[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, "\"").replace(/\\\\/g, "\\")
    }
    const parsed = value === "+Inf" ? Infinity : value === "-Inf" ? -Infinity : Number(value)
    if (Number.isNaN(parsed) && value !== "NaN") throw new Error(`malformed value: ${line}`)
    samples.push({ name, labels, value: parsed })
  }
  const sum = (name: string, labels: Readonly<Record<string, string>> = {}) =>
    samples
      .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
      .reduce((total, sample) => total + sample.value, 0)
  return { samples, types, sum }
}
