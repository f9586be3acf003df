import { Histogram, Registry } from 'prom-client'
import t from 'tap'
import { FastHistogram } from '../../../src/metrics/durations.js'

const BOUNDS = [0.001, 0.01, 0.1, 1]
const NAME = 'http_request_duration_seconds'
const HELP = 'Time from the request\'s arrival to its answer'

function both (): { fast: FastHistogram, fastRegistry: Registry, reference: Histogram<'method' | 'route'>, referenceRegistry: Registry } {
  const fastRegistry = new Registry()
  const referenceRegistry = new Registry()
  return {
    fast: new FastHistogram(NAME, HELP, BOUNDS, fastRegistry),
    fastRegistry,
    reference: new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route'], buckets: BOUNDS, registers: [referenceRegistry] }),
    referenceRegistry
  }
}

t.test('the exposition is prom-client\'s Histogram\'s, value for value, bounds and +Inf included', async (t) => {
  const { fast, fastRegistry, reference, referenceRegistry } = both()
  const series = [{ method: 'GET', route: '/plants/{id}' }, { method: 'POST', route: '/plants' }, { method: 'GET', route: 'not_found' }]
  const handles = series.map((labels) => fast.labels(labels))
  // On a bound, between bounds, above the last one (only in +Inf), and zero.
  const values = [0, 0.001, 0.0015, 0.01, 0.05, 1, 2.5, 30]
  for (const [i, labels] of series.slice(0, 2).entries()) {
    for (const value of values.slice(i)) {
      handles[i].observe(value)
      reference.observe(labels, value)
    }
  }
  t.equal(await fastRegistry.metrics(), await referenceRegistry.metrics())
  t.match(await fastRegistry.metrics(), /http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/plants\/\{id\}"\} 8/)
  t.notMatch(await fastRegistry.metrics(), /not_found/, 'a label set shows once it has been observed')
  t.same(fast.all().map((s) => s.count), [8, 7, 0])
})

t.test('a reset starts every series from zero, and the handles kept go on counting', async (t) => {
  const { fast, fastRegistry, reference, referenceRegistry } = both()
  const handle = fast.labels({ method: 'POST', route: '/plants' })
  handle.observe(0.02)
  fastRegistry.resetMetrics()
  referenceRegistry.resetMetrics()
  t.equal(await fastRegistry.metrics(), await referenceRegistry.metrics(), 'nothing shown after a reset')
  handle.observe(0.5)
  reference.observe({ method: 'POST', route: '/plants' }, 0.5)
  t.equal(await fastRegistry.metrics(), await referenceRegistry.metrics())
})
