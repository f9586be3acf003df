import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { CHECK_EVERY, readyCheck } from '../../../src/store/ready-check.js'

function counted (outcome: () => Promise<void> = async () => {}) {
  let calls = 0
  let changes = 0
  const check = readyCheck(async () => {
    calls++
    await sleep(20)
    await outcome()
  }, { changes: () => changes })
  return { check, calls: () => calls, change: () => { changes++ } }
}

t.test('callers at once share one check, and its answer stands for a second', async (t) => {
  const { check, calls } = counted()
  await Promise.all(Array.from({ length: 50 }, check))
  t.equal(calls(), 1, 'fifty at once: one check')
  await check()
  t.equal(calls(), 1, 'right after: the same answer')
  await sleep(CHECK_EVERY)
  await check()
  t.equal(calls(), 2, 'a second later: asked again')
})

t.test('a failure is shared and kept as a success is', async (t) => {
  let failing = true
  const { check, calls } = counted(async () => { if (failing) throw new Error('down') })
  const answers = await Promise.allSettled([check(), check()])
  t.same(answers.map((answer) => answer.status), ['rejected', 'rejected'])
  failing = false
  await t.rejects(check(), /down/, 'within the second: the last answer')
  t.equal(calls(), 1)
  await sleep(CHECK_EVERY)
  await check()
  t.equal(calls(), 2)
})

t.test('an outage that starts or ends since the last check makes the next call ask at once', async (t) => {
  const { check, calls, change } = counted()
  await check()
  change()
  await check()
  t.equal(calls(), 2, 'asked again at once')
  await check()
  t.equal(calls(), 2, 'and then kept again')
})

t.test('an outage the check itself finds calls for no second check', async (t) => {
  let changes = 0
  let calls = 0
  const check = readyCheck(async () => {
    calls++
    changes++
    throw new Error('down')
  }, { changes: () => changes })
  await t.rejects(check())
  await t.rejects(check())
  t.equal(calls, 1)
})
