import Fastify from 'fastify'
import t from 'tap'
import events, { type EventsOptions } from '../../plugins/events/index.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'

// The change feed's plugin refuses options it cannot work with when it is registered.

t.test('the events plugin checks its options when registered', async (t) => {
  const store = openSqliteStore({ path: ':memory:', feed: true })
  t.teardown(() => store.close())
  const feed = store.events
  const key = store.cursorKey
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ feed: null, cursorKey: key, retention: 1000 }, /options\.feed must be an EventFeed/],
    [{ feed: {}, cursorKey: key, retention: 1000 }, /options\.feed must be an EventFeed/],
    [{ feed, cursorKey: Buffer.alloc(8), retention: 1000 }, /options\.cursorKey must be a Buffer/],
    [{ feed, cursorKey: key, retention: 0 }, /options\.retention must be a positive integer/],
    [{ feed, cursorKey: key, retention: 1000, maxWaiting: 0 }, /options\.maxWaiting must be a positive integer/]
  ]
  for (const [options, message] of cases) {
    const app = Fastify()
    app.register(events, options as unknown as EventsOptions)
    await t.rejects(async () => { await app.ready() }, message)
    await app.close()
  }
})
