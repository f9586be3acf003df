import t from 'tap'
import { waitingRoom, WAKE_MS } from '../../plugins/events/waiting.js'
import { openStore } from '../../src/store/index.js'
import type { EventFeed } from '../../src/store/feed-types.js'
import { sqliteUrl } from '../helpers/build.js'

// The waiting room on a real store: how soon a commit wakes a waiting request.
t.test('a commit after a quiet spell wakes at once; commits that keep coming wake at most every WAKE_MS', async (t) => {
  const store = await openStore({ databaseUrl: sqliteUrl(t), sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout: 5000, eventsRetention: 60_000 })
  t.teardown(() => store.close())
  const room = waitingRoom(store.events as EventFeed, 10)
  const gone = new AbortController().signal
  /** Waits for the next commit while `commit` runs: ms from the commit's end to the wake-up. */
  async function woken (commit: () => Promise<unknown>): Promise<number> {
    const { seen, leave } = room.enter()
    try {
      const waiting = room.wait(seen, Date.now() + 5000, gone)
      await commit()
      const committed = performance.now()
      t.equal(await waiting, true, 'woken by the commit')
      return performance.now() - committed
    } finally {
      leave()
    }
  }
  let id = 0n
  const create = async (): Promise<unknown> => await store.create({ id: ++id, name: 'p' })

  // Three tries: a machine busy with other work may be slow to run the wake-up, never held back by the pacing.
  const lone: number[] = []
  for (let i = 0; i < 3 && !lone.some((ms) => ms < WAKE_MS); i++) {
    await new Promise((resolve) => setTimeout(resolve, 2 * WAKE_MS))
    lone.push(await woken(create))
  }
  t.ok(lone.some((ms) => ms < WAKE_MS), `after a quiet spell, at once (${lone.map((ms) => ms.toFixed(1)).join(', ')} ms)`)
  // Commits one after another: the room counts a wake-up each time it wakes its waiters.
  const { leave } = room.enter()
  const before = room.commits
  const started = performance.now()
  for (let i = 0; i < 30; i++) await create()
  await new Promise((resolve) => setTimeout(resolve, 2 * WAKE_MS))
  const elapsed = performance.now() - started
  const wakes = room.commits - before
  leave()
  t.ok(wakes >= 1 && wakes <= elapsed / WAKE_MS + 1, `30 commits in ${elapsed.toFixed(0)} ms woke the waiters ${wakes} times: every ${WAKE_MS} ms at most`)
})

t.test('a wait that begins after a commit it has not seen answers at once; a closed room or a gone request waits for nothing', async (t) => {
  const store = await openStore({ databaseUrl: sqliteUrl(t), sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout: 5000, eventsRetention: 60_000 })
  t.teardown(() => store.close())
  const room = waitingRoom(store.events as EventFeed, 10)
  const { seen, leave } = room.enter()
  await store.create({ id: 1n, name: 'p' })
  // The first commit after a quiet spell wakes the room at once, or within WAKE_MS.
  for (let i = 0; i < 100 && room.commits === seen; i++) await new Promise((resolve) => setTimeout(resolve, WAKE_MS / 5))
  t.not(room.commits, seen, 'the room heard the commit')
  const started = performance.now()
  t.equal(await room.wait(seen, Date.now() + 5000, new AbortController().signal), true, 'woken by the commit it had not seen')
  t.ok(performance.now() - started < 1000, 'without waiting for the timeout')

  const gone = new AbortController()
  gone.abort()
  t.equal(await room.wait(room.commits, Date.now() + 5000, gone.signal), false, 'a request already gone does not wait')
  room.close()
  t.equal(await room.wait(room.commits, Date.now() + 5000, new AbortController().signal), false, 'a closed room does not wait')
  t.equal(room.open, false, 'and lets no one in')
  leave()
})
