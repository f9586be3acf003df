import t from 'tap'
import { nextAttemptAt, withJitter } from '../../../src/webhooks/schedule.js'

t.test('a delay moves by up to 20% either way, evenly', async (t) => {
  t.equal(withJitter(1000, () => 0), 800)
  t.equal(withJitter(1000, () => 0.5), 1000)
  t.equal(withJitter(1000, () => 0.999999), 1200)
  t.equal(withJitter(0, () => 0.7), 0)
  const samples = Array.from({ length: 10_000 }, () => withJitter(10_000))
  t.ok(samples.every((delay) => delay >= 8000 && delay <= 12000), 'within ±20%')
  t.ok(samples.some((delay) => delay < 8400) && samples.some((delay) => delay > 11600), 'the whole span is used')
  t.ok(new Set(samples).size > 1000, 'spread, not a few fixed values')
  const mean = samples.reduce((sum, delay) => sum + delay, 0) / samples.length
  t.ok(mean > 9800 && mean < 10200, `centred on the delay (mean ${mean})`)
})

t.test('the next attempt follows the schedule, then there is none', async (t) => {
  const schedule = [5000, 300000, 1800000]
  const now = Date.UTC(2025, 0, 1)
  t.same(nextAttemptAt(schedule, 1, now, () => 0.5), new Date(now + 5000), 'after the first attempt: the first delay')
  t.same(nextAttemptAt(schedule, 2, now, () => 0.5), new Date(now + 300000))
  t.same(nextAttemptAt(schedule, 3, now, () => 0), new Date(now + 1440000), 'jittered')
  t.equal(nextAttemptAt(schedule, 4, now), undefined, 'the schedule is spent: failed')
  t.equal(nextAttemptAt(schedule, 9, now), undefined, 'a manual retry after that fails at once if it fails')
  t.equal(nextAttemptAt([], 1, now), undefined, 'an empty schedule never retries')
  const at = nextAttemptAt(schedule, 1) as Date
  t.ok(at.getTime() >= Date.now() + 3000 && at.getTime() <= Date.now() + 6000, 'from now by default')
})
