import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Pressure } from '../../../src/webhooks/pressure.js'

t.test('high while the event loop is busy, then low again, with one call when it eases', async (t) => {
  let eased = 0
  const pressure = new Pressure(() => { eased++ }, { interval: 100 })
  t.teardown(() => pressure.stop())
  await sleep(250)
  t.equal(pressure.high, false, 'an idle loop')
  // Busy for 450 ms, with a turn of the loop every 20 ms so that the sampler runs meanwhile.
  const end = performance.now() + 450
  while (performance.now() < end) {
    const turn = performance.now() + 20
    while (performance.now() < turn);
    await new Promise((resolve) => setImmediate(resolve))
  }
  t.equal(pressure.high, true, 'a saturated loop')
  t.equal(eased, 0)
  await sleep(350)
  t.equal(pressure.high, false, 'idle again')
  t.equal(eased, 1, 'told once that it eased')
})
