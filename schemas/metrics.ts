import { Type } from '@sinclair/typebox'

/** The body of GET /metrics: Prometheus's text format, not JSON. */
export const MetricsText = Type.String({
  description: 'Prometheus text exposition format 0.0.4: request counts and durations by route template, the store\'s batches, queue and outages, refusals, and the process\'s own metrics'
})
