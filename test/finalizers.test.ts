import { join } from 'node:path'
import t from 'tap'
import { TOKEN } from './helpers/build.js'
import { COMPILED_SERVER, exited, startServer } from './helpers/server.js'

// Node.js 24.19 and later abort when the garbage collector finalizes, at a moment when
// no JavaScript context is entered, an object of an addon built on node::ObjectWrap,
// as better-sqlite3 12's statements were: the service died within seconds of its start.
// A gc() called from JavaScript (--expose-gc) runs inside a context and hid it; V8's
// --gc-interval collects after every so many allocations, wherever they happen. Under
// it, with better-sqlite3 12 on Node.js 24.21, the compiled service aborted before it
// listened in every start (under the tests' TypeScript loader, in none). So the compiled
// service starts three times under it here, and works each time, on the Node.js line
// that runs the suite (CI runs this file on each supported line).
const GC_OFTEN = ['--gc-interval=1000']
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

for (const start of [1, 2, 3]) {
  t.test(`start ${start}: the service outlives its statements being finalized, and stops cleanly`, async (t) => {
    const env = { API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(t.testdir(), 'plants.db')}`, WEBHOOK_ALLOW_PRIVATE: 'true' }
    const server = await startServer(t, env, GC_OFTEN, COMPILED_SERVER)
    const call = async (method: string, path: string, body?: unknown): Promise<number> => {
      const res = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      await res.arrayBuffer()
      return res.status
    }

    const statuses = new Map<string, number>()
    for (let id = 1; id <= 10; id++) {
      const answers = await Promise.all([
        call('POST', '/plants', { id, name: `plant ${id}`, tag: id % 2 === 0 ? 'even' : 'odd' }),
        call('GET', `/plants/${id - 1}`),
        call('GET', `/plants?limit=5&tag=${id % 2 === 0 ? 'even' : 'odd'}`),
        call('DELETE', `/plants/${id - 2}`),
        call('GET', '/ready'),
        id % 5 === 0 ? call('POST', '/webhooks', { url: `http://127.0.0.1:9/hook-${id}` }) : 201,
        id % 5 === 0 ? call('GET', '/webhooks') : 200
      ])
      for (const status of answers) statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1)
    }
    t.same([...statuses.keys()].filter((status) => !['200', '201', '204', '404'].includes(status)), [], `10 rounds of seven requests, statuses: ${JSON.stringify(Object.fromEntries(statuses))}`)
    t.equal(server.child.exitCode, null, 'the process still runs')

    server.child.kill('SIGTERM')
    t.same(await exited(server), { code: 0, signal: null }, `it stopped by itself: ${server.stderr()}`)
    t.notMatch(server.stderr(), /Assertion failed|Segmentation/)
  })
}
