import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/index.js'
import { assertError, AUTH, getPlant, patchPlant, postPlant, TOKEN } from './helpers/build.js'
import { connect, freshPostgresUrl, PG_SKIP as skip } from './helpers/postgres.js'

// Built as test/helpers/build.ts builds an app: loadConfig, then buildApp.
async function instance (t: Test, url: string): Promise<FastifyInstance> {
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: url, DATABASE_POOL_SIZE: '4', MAX_EVENT_LOOP_DELAY: '0' })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

t.test('two instances on one database: one content per id, replays 200, the others 409, no 500', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  // Started together, so their migrations race as well.
  const apps = await Promise.all([instance(t, url), instance(t, url)])

  const ids = [-9223372036854775808n, 9223372036854775807n, 9007199254740993n, 9007199254740992n,
    ...Array.from({ length: 60 }, (_, i) => BigInt(i + 1))]
  const contents = (id: bigint) => [
    { name: `plant ${id}`, tag: 'a' },
    { name: `plant ${id}` },
    { name: 'other', tag: 'a' }
  ]
  // Per id: each content several times, spread over both instances, all ids interleaved.
  const requests = ids.flatMap((id) => Array.from({ length: 12 }, (_, k) => ({ id, content: contents(id)[k % 3], app: apps[(k >> 1) % 2] })))
  requests.sort(() => Math.random() - 0.5)
  const responses = await Promise.all(requests.map(({ id, content, app }) =>
    postPlant(app, `{"id":${id},"name":${JSON.stringify(content.name)}${content.tag === undefined ? '' : `,"tag":"${content.tag}"`}}`)))

  const statuses = responses.map((response) => response.statusCode)
  t.strictSame([...new Set(statuses)].sort(), [200, 409], 'only 200 and 409, no 500')

  let wrong = 0
  for (const id of ids) {
    const reads = await Promise.all(apps.map((app) => getPlant(app, id)))
    t.equal(reads[0].body, reads[1].body, `id ${id}: both instances read the same plant`)
    const stored = reads[0].json()
    t.ok(contents(id).some((content) => JSON.stringify(content) === JSON.stringify(stored)), `id ${id}: a content that was sent`)
    requests.forEach((request, i) => {
      if (request.id !== id) return
      const response = responses[i]
      if (JSON.stringify(request.content) === JSON.stringify(stored)) {
        if (response.statusCode !== 200 || response.body !== reads[0].body) wrong++
      } else if (response.statusCode !== 409) {
        wrong++
      } else {
        assertError(t, response, 409)
      }
    })
  }
  t.equal(wrong, 0, 'the stored content got 200 every time, every other content 409')

  const db = await connect(t, url)
  const { rows } = await db.query('SELECT count(*)::int AS n FROM plants')
  t.equal(rows[0].n, ids.length, 'one row per id')
})

t.test('two instances on one database: of concurrent changes or deletes made against one ETag, exactly one succeeds', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const apps = await Promise.all([instance(t, url), instance(t, url)])
  const ids = Array.from({ length: 10 }, (_, i) => BigInt(i) + 9007199254740993n)
  const etags = new Map<bigint, string>()
  for (const id of ids) etags.set(id, (await postPlant(apps[0], `{"id":${id},"name":"start"}`)).headers.etag as string)

  // Per id, 20 changes against the ETag both instances gave, all ids interleaved.
  const changes = ids.flatMap((id) => Array.from({ length: 20 }, (_, k) => ({ id, name: `writer ${k}`, app: apps[k % 2] })))
  changes.sort(() => Math.random() - 0.5)
  const answers = await Promise.all(changes.map(({ id, name, app }) => patchPlant(app, id, { name }, { ...AUTH, 'if-match': etags.get(id) as string })))
  t.strictSame([...new Set(answers.map((res) => res.statusCode))].sort(), [200, 412], 'only 200 and 412')
  for (const id of ids) {
    const mine = answers.filter((_, i) => changes[i].id === id)
    const winners = mine.filter((res) => res.statusCode === 200)
    t.equal(winners.length, 1, `id ${id}: one change won`)
    for (const res of mine.filter((res) => res.statusCode !== 200)) assertError(t, res, 412)
    const reads = await Promise.all(apps.map((app) => getPlant(app, id)))
    t.equal(reads[0].body, winners[0].body, `id ${id}: the winner's plant is stored`)
    t.equal(reads[1].headers.etag, winners[0].headers.etag, 'both instances give its ETag')
  }

  // Then 20 deletes per id against the winners' ETags, over both instances.
  const deletes = ids.flatMap((id) => Array.from({ length: 20 }, (_, k) => ({ id, app: apps[k % 2] })))
  deletes.sort(() => Math.random() - 0.5)
  const current = new Map(await Promise.all(ids.map(async (id) => [id, (await getPlant(apps[0], id)).headers.etag as string] as const)))
  const deleted = await Promise.all(deletes.map(({ id, app }) =>
    app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: { ...AUTH, 'if-match': current.get(id) as string } })))
  for (const id of ids) {
    const statuses = deleted.filter((_, i) => deletes[i].id === id).map((res) => res.statusCode)
    t.equal(statuses.filter((s) => s === 204).length, 1, `id ${id}: one delete won`)
    t.equal(statuses.filter((s) => s === 412).length, 19, 'the others 412')
  }
  const db = await connect(t, url)
  t.equal((await db.query('SELECT count(*)::int AS n FROM plants')).rows[0].n, 0, 'every plant deleted, once')
})
