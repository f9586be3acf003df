// The request histogram (src/metrics/durations.ts) as it would be with prom-client's own
// Histogram: the same metric, the same interface to src/metrics/index.ts, each observation
// through the child that Histogram.labels() gives. Only the bench loads it (library.ts).
import { Histogram, type Registry } from 'prom-client'

export interface Series {
  readonly labels: Readonly<Record<string, string>>
  /** Observations so far, for http_requests_total (which copies the count when scraped). */
  count: number
  observe (value: number): void
}

export class FastHistogram {
  private readonly histogram: Histogram
  private readonly series: Series[] = []

  constructor (name: string, help: string, bounds: readonly number[], registry: Registry) {
    this.histogram = new Histogram({ name, help, buckets: [...bounds], labelNames: ['method', 'route', 'status_code'], registers: [registry] })
  }

  labels (labels: Readonly<Record<string, string>>): Series {
    const child = this.histogram.labels(labels)
    const series: Series = { labels, count: 0, observe: (value) => { child.observe(value); series.count++ } }
    this.series.push(series)
    return series
  }

  all (): readonly Series[] {
    return this.series
  }
}
