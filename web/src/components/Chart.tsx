import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { dayToSeconds } from "../lib/dates"

export interface ChartSeries {
  readonly label: string
  readonly values: ReadonlyArray<number>
}

interface ChartProps {
  readonly title: string
  readonly days: ReadonlyArray<string>
  readonly series: ReadonlyArray<ChartSeries>
  readonly format: (value: number) => string
}

/** Colour-blind-safe palette (Okabe–Ito), dark enough on white for the 3:1 contrast of graphics. */
const palette = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#6B5A00", "#56B4E9", "#E69F00", "#000000"]

/**
 * A stacked-looking daily bar chart per series, drawn by uPlot. The same numbers are in a table
 * beside it, so screen readers (and tests) read exactly what is drawn.
 */
export const Chart = ({ title, days, series, format }: ChartProps) => {
  const holder = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = holder.current
    if (element === null || days.length === 0) return
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 300),
      height: 220,
      // Days are calendar dates of the workspace's zone, carried as UTC midnights: show them as such.
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      scales: { x: { time: true } },
      axes: [{}, { values: (_chart, ticks) => ticks.map(format), size: 70 }],
      series: [
        { label: "Day", value: (_chart, seconds) => (seconds == null ? "—" : new Date(seconds * 1000).toISOString().slice(0, 10)) },
        ...series.map((s, index) => ({
          label: s.label,
          stroke: palette[index % palette.length],
          fill: `${palette[index % palette.length]}22`,
          width: 2,
          points: { show: days.length <= 45 },
          value: (_chart: uPlot, value: number | null) => (value == null ? "—" : format(value))
        }))
      ]
    }
    const data: uPlot.AlignedData = [days.map(dayToSeconds), ...series.map((s) => [...s.values])]
    const chart = new uPlot(options, data, element)
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(element.clientWidth, 300), height: 220 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [days, series, format])
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} class="chart-canvas" aria-hidden="true" />
      <details>
        <summary>{title}: show the numbers</summary>
        <ChartTable title={title} days={days} series={series} format={format} />
      </details>
    </figure>
  )
}

const ChartTable = ({ title, days, series, format }: ChartProps) => (
  <div class="table-scroll" tabIndex={0}>
    <table>
      <caption class="visually-hidden">{title} per day</caption>
      <thead>
        <tr>
          <th scope="col">Day</th>
          {series.map((s) => <th scope="col" key={s.label}>{s.label}</th>)}
        </tr>
      </thead>
      <tbody>
        {days.map((day, row) => (
          <tr key={day}>
            <th scope="row">{day}</th>
            {series.map((s) => <td key={s.label}>{format(s.values[row] ?? 0)}</td>)}
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)
