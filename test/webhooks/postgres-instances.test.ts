import type { AddressInfo } from 'node:net'
import t from 'tap'
import { TOKEN } from '../helpers/build.js'
import { connect, freshPostgresUrl, PG_SKIP as skip } from '../helpers/postgres.js'
import { startReceiver } from '../helpers/receiver.js'
import { exited, startServer } from '../helpers/server.js'
import { LEASE_MARGIN } from '../../src/webhooks/sender.js'
import { postPlants, startInProcess, subscribe, tally, waitUntil } from '../helpers/webhooks.js'

// Two instances on one PostgreSQL: a server process and one built in this process.

const ATTEMPT = /"msg":"webhook attempt"/

t.test('two instances share the deliveries, each attempted once; a killed one\'s claims are taken over when its lease runs out', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  let hang = false
  const receiver = await startReceiver(t, (_, response) => { if (!hang) response.writeHead(204).end() })
  await subscribe(url, `${receiver.origin}/hooks`)
  // A 2 s timeout: leases of 2 s + 5 s, renewed while held.
  const env = { API_TOKENS: TOKEN, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT: '2000', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms' }
  const a = await startServer(t, { ...env, LOG_LEVEL: 'debug' })
  const bLog: string[] = []
  const b = await startInProcess(t, { ...env, LOG_LEVEL: 'debug' }, bLog)
  await b.listen({ port: 0, host: '127.0.0.1' })
  const bUrl = `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`

  const acknowledged = await postPlants([a.url, bUrl], 1, 2000, 32)
  t.equal(acknowledged.length, 2000, 'every plant created')
  await waitUntil('every plant delivered', () => tally(receiver).plants.size === 2000, 90_000)
  const { plants } = tally(receiver)
  t.ok([...plants.values()].every((ids) => ids.size === 1), 'one webhook-id each')
  // Each attempt, as its instance logged it once it ended: one delivery's attempt number is never logged twice.
  const logged = (lines: string[]) => lines.filter((line) => ATTEMPT.test(line)).map((line) => JSON.parse(line) as { delivery: string, attempt: number, result: string })
  const attempts = () => [...logged(a.stdout().split('\n')), ...logged(bLog)]
  await waitUntil('every attempt ended', () => attempts().length === receiver.received.length, 10_000)
  const [byA, byB] = [logged(a.stdout().split('\n')), logged(bLog)]
  t.ok(byA.length > 0 && byB.length > 0, `both instances sent: ${byA.length} and ${byB.length} attempts`)
  const all = [...byA, ...byB]
  t.equal(new Set(all.map(({ delivery, attempt }) => `${delivery}/${attempt}`)).size, all.length, 'no attempt made twice')
  t.equal(receiver.received.length, all.length, 'every request the receiver got is one of those attempts')
  const retried = all.filter(({ result }) => result !== 'succeeded')
  t.ok(retried.length < 20, `${retried.length} attempts failed (a timeout under load) and were retried`)

  // The receiver stops answering; the process, now the only instance, claims new deliveries and is
  // killed holding them; an instance started after the kill takes them over.
  await b.close()
  hang = true
  const before = receiver.received.length
  for (let id = 2001; id <= 2008; id++) t.same(await postPlants([a.url], id, id, 1), [id])
  await waitUntil('attempts in flight', () => receiver.received.length >= before + 4, 10_000)
  const db = await connect(t, url)
  const { rows: held } = await db.query<{ id: string, until: Date }>(
    'SELECT id, lease_until AS until FROM webhook_deliveries WHERE status = \'pending\' AND lease_owner LIKE $1', [`%:${a.child.pid}:%`])
  a.child.kill('SIGKILL')
  await exited(a)
  const killed = Date.now()
  hang = false
  t.ok(held.length > 0, `the killed process held ${held.length} deliveries`)
  await startInProcess(t, env)

  const after = (id: string) => receiver.received.filter((request) => request.headers['webhook-id'] === id && request.at > killed)
  await waitUntil('its deliveries are taken over', () => held.every(({ id }) => after(id).length > 0), 30_000)
  for (const { id, until } of held) {
    const [first] = after(id)
    t.ok(first.at >= until.getTime() - 200, `${id}: taken over ${first.at - until.getTime()} ms after its lease ran out, not before`)
    t.ok(first.at - killed <= 2000 + LEASE_MARGIN + 3000, `${id}: within the timeout and the margin of the kill (${first.at - killed} ms)`)
  }
})
