import t from 'tap'
import type { ClaimedDelivery } from '../../../src/store/webhook-types.js'
import { Lanes } from '../../../src/webhooks/lanes.js'

let serial = 0
function delivery (endpointId: string): ClaimedDelivery {
  return { id: `d${++serial}`, endpointId, url: 'https://example.com/', secrets: [], body: '{}', attempts: 0 }
}

t.test('attempts start up to the bound per endpoint; the rest wait in claim order', async (t) => {
  const lanes = new Lanes(2, 10)
  const a = [delivery('a'), delivery('a'), delivery('a'), delivery('a')]
  t.same(a.map((d) => lanes.admit(d)), [true, true, false, false])
  t.equal(lanes.running, 2)
  t.equal(lanes.room(), 8)
  t.same(lanes.full(), ['a'], 'an endpoint with a round of its lanes waiting is left out of the next claim')
  t.equal(lanes.queued('a'), 2)
  t.equal(lanes.admit(delivery('b')), true, 'another endpoint is not held up')
  t.same(lanes.full(), ['a'])
  t.equal(lanes.end('a'), a[2], 'an ended attempt hands its place to the first waiting')
  t.equal(lanes.running, 3, 'which is counted in its place')
  t.equal(lanes.queued('a'), 1)
  t.same(lanes.full(), [], 'less than a round waiting: its next deliveries are claimed while these run')
  t.equal(lanes.end('a'), a[3])
  t.equal(lanes.queued('a'), 0)
  t.same(lanes.full(), [], 'at its bound, nothing waiting')
  t.equal(lanes.end('a'), undefined)
  t.same(lanes.full(), [])
  t.equal(lanes.running, 2)
  t.equal(lanes.end('a'), undefined)
  t.equal(lanes.end('b'), undefined)
  t.equal(lanes.running, 0)
  t.equal(lanes.room(), 10)
})

t.test('an endpoint with deliveries waiting queues new ones behind them, even below its bound', async (t) => {
  const lanes = new Lanes(1, 10)
  const [first, second, third] = [delivery('a'), delivery('a'), delivery('a')]
  lanes.admit(first)
  lanes.admit(second)
  t.equal(lanes.end('a'), second)
  t.equal(lanes.admit(third), false, 'queued behind, never ahead of, what waits')
  t.same(lanes.full(), ['a'])
  t.equal(lanes.drop(), 1, 'dropped at stop: their leases are given back')
  t.same(lanes.full(), [], 'nothing waits')
  t.equal(lanes.room(), 9, 'the one in flight still counts')
  t.equal(lanes.end('a'), undefined)
  t.equal(lanes.room(), 10)
})

t.test('the total bound leaves no room', async (t) => {
  const lanes = new Lanes(4, 3)
  for (const endpoint of ['a', 'b', 'c']) lanes.admit(delivery(endpoint))
  t.equal(lanes.room(), 0)
  t.equal(lanes.drop(), 0)
})
