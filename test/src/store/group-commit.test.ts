import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { groupCommit, type Waiter } from '../../../src/store/group-commit.js'
import { StoreUnavailableError } from '../../../src/store/types.js'

t.test('a batch that answers after its writes\' deadline: each caller heard at its deadline, and the late outcome changes nothing', async (t) => {
  const TIMEOUT = 50
  let late: Promise<void> | undefined
  let answered = false
  const commits = groupCommit<string, string>({
    maxBatch: 10,
    maxInFlight: 1,
    maxQueue: 10,
    timeout: TIMEOUT,
    commit: async (batch: Array<Waiter<string, string>>) => {
      late = sleep(TIMEOUT * 3).then(() => {
        // A store that answers at last: one write committed, the other refused.
        answered = true
        batch[0].resolve('committed')
        batch[1].reject(new Error('refused'))
      })
      await late
    }
  })
  const started = Date.now()
  const outcomes = await Promise.allSettled([commits.add('a'), commits.add('b')])
  const heard = Date.now() - started
  // Against the batch's own answer, not the clock: on a busy machine both timers fire late.
  t.notOk(answered, `heard after ${heard} ms, before the batch answered`)
  for (const outcome of outcomes) {
    t.equal(outcome.status, 'rejected')
    t.ok(outcome.status === 'rejected' && outcome.reason instanceof StoreUnavailableError, 'a 503, not the late outcome')
    t.match(outcome.status === 'rejected' && outcome.reason, { message: `store unavailable: no answer within ${TIMEOUT} ms` })
  }
  await late
  await commits.drain()
})
