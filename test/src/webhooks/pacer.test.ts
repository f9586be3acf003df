import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Pacer } from '../../../src/webhooks/pacer.js'
import { plantWrites } from '../../../src/webhooks/plant-writes.js'

async function timed (work: () => Promise<unknown>): Promise<number> {
  const start = Date.now()
  await work()
  return Date.now() - start
}

t.test('while contended, work of 50 ms at a share of 0.25 makes the next wait 150 ms', async (t) => {
  const pacer = new Pacer(0.25)
  t.ok(await timed(() => pacer.turn()) < 20, 'the first at once')
  t.ok(await timed(() => pacer.run(() => sleep(50))) >= 45, 'the work ran')
  const waited = await timed(() => pacer.turn())
  t.ok(waited >= 140 && waited < 400, `then waited ${waited} ms`)
  pacer.charge(10_000)
  setTimeout(() => pacer.stop(), 50)
  t.ok(await timed(() => pacer.turn()) < 1000, 'stop ends a wait at once')
})

t.test('uncontended, nothing waits', async (t) => {
  let contended = false
  const pacer = new Pacer(0.25, () => contended)
  pacer.charge(10_000)
  t.ok(await timed(() => pacer.turn()) < 20, 'no wait')
  contended = true
  pacer.charge(10_000)
  contended = false
  t.ok(await timed(() => pacer.turn()) < 20, 'a wait set while contended ends once the writes stop')
})

t.test('plant writes are seen for a while after their last batch', async (t) => {
  const { observer, writing } = plantWrites(100)
  t.equal(writing(), false, 'none yet')
  t.equal(observer.batch?.(1, []), undefined)
  t.equal(writing(), true, 'just now')
  await sleep(150)
  t.equal(writing(), false, 'a while ago')
})
