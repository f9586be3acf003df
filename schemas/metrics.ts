import { Type } from '@sinclair/typebox'

/** The body of GET /metrics: Prometheus's text format, not JSON. */
export const MetricsText = Type.String({
  // Its series are by route template and status, never by a value a client sends: its size is bounded by the routes.
  maxLength: 4 * 1024 * 1024,
  description: 'Prometheus text exposition format 0.0.4: request counts and durations by route template, the store\'s batches, queue and outages, refusals, and the process\'s own metrics'
})
