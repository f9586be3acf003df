import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { openStore, type PlantStore } from '../../../src/store/index.js'
import type { WebhookStore } from '../../../src/store/webhook-types.js'
import { EXPAND_STEP, WebhookSender, type SenderLogger, type SenderOptions } from '../../../src/webhooks/sender.js'
import { makeSecret } from '../../../src/webhooks/signing.js'
import { startReceiver } from '../../helpers/receiver.js'
import { forEachStore } from '../../helpers/stores.js'
import { waitUntil } from '../../helpers/webhooks.js'

// Every receiver is on 127.0.0.1: private targets are allowed in this file.
const BASE = { allowPrivate: true, timeout: 2000, schedule: [100, 200], retention: 3_600_000 }

interface Logged { level: string, fields: Record<string, unknown>, message: string }

function logger (): { log: SenderLogger, lines: Logged[] } {
  const lines: Logged[] = []
  const at = (level: string) => (fields: object, message: string) => { lines.push({ level, fields: fields as Record<string, unknown>, message }) }
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } }
}

async function openAt (t: Test, databaseUrl: string, databaseTimeout = 2000): Promise<PlantStore> {
  const store = await openStore({ databaseUrl, sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout })
  t.teardown(() => store.close())
  return store
}

// Stopped before its store closes (teardowns run last first).
function sender (t: Test, store: PlantStore, options: Partial<SenderOptions> = {}) {
  const { log, lines } = logger()
  const sender = new WebhookSender({ ...BASE, store: store.webhooks, log, ...options })
  t.teardown(() => sender.stop())
  return { sender, lines }
}

forEachStore(t, (t, _build, databaseUrl) => {
  const open = async (t: Test) => await openAt(t, await databaseUrl(t))

  t.test('a new plant is sent right after its commit, not at the next poll', async (t) => {
    const store = await open(t)
    const receiver = await startReceiver(t)
    const secret = makeSecret()
    await store.webhooks.createEndpoint({ url: `${receiver.origin}/in`, secret })
    sender(t, store, { pollInterval: 60_000 }).sender.start()
    await sleep(100)
    for (let i = 1; i <= 5; i++) {
      await store.create({ id: BigInt(i), name: `plant ${i}` })
      const committed = Date.now()
      const [request] = (await receiver.waitFor(i)).slice(-1)
      t.ok(request.at - committed < 500, `plant ${i} arrived ${request.at - committed} ms after its commit`)
      t.same(new Webhook(secret).verify(request.body, request.headers as Record<string, string>), { id: i, name: `plant ${i}` })
    }
  })

  t.test('a slow endpoint holds up only itself', async (t) => {
    const store = await open(t)
    let open_ = 0
    let most = 0
    const slow = await startReceiver(t, async (_, response) => {
      most = Math.max(most, ++open_)
      await sleep(400)
      open_--
      response.writeHead(204).end()
    })
    const fast = await startReceiver(t)
    await store.webhooks.createEndpoint({ url: slow.origin, secret: makeSecret() })
    // A backlog for the slow endpoint, older than anything the fast one will get.
    for (let i = 1; i <= 30; i++) await store.create({ id: BigInt(i), name: `old ${i}` })
    const { sender: running } = sender(t, store, { perEndpoint: 2, total: 8 })
    running.start()
    await slow.waitFor(1)
    await store.webhooks.createEndpoint({ url: fast.origin, secret: makeSecret() })
    const started = Date.now()
    for (let i = 31; i <= 40; i++) await store.create({ id: BigInt(i), name: `new ${i}` })
    await fast.waitFor(10, 3000)
    t.ok(Date.now() - started < 2000, `the fast endpoint got its 10 in ${Date.now() - started} ms, behind a backlog of 30 that takes 6 s`)
    t.ok(slow.received.length < 20, `the slow one is still at ${slow.received.length}`)
    const all = await slow.waitFor(30, 15_000)
    t.equal(new Set(all.map((request) => request.headers['webhook-id'])).size, 30, 'the backlog is delivered, each once')
    t.ok(most <= 2, `at most 2 attempts in flight to the slow endpoint (${most})`)
  })

  t.test('stop lets attempts in flight finish, then gives back what it still holds', async (t) => {
    const store = await open(t)
    const receiver = await startReceiver(t, async (_, response) => {
      await sleep(300)
      response.writeHead(200).end()
    })
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    const { sender: first } = sender(t, store, { grace: 3000 })
    first.start()
    await store.create({ id: 1n, name: 'finished' })
    await receiver.waitFor(1)
    await first.stop()
    t.match(await store.webhooks.listDeliveries(endpoint.id, { limit: 10 }), [{ status: 'succeeded', attempts: 1, lastStatus: 200 }], 'the attempt in flight finished and was recorded')

    // An attempt that outlasts the grace period is cut off, and its delivery is due again at once.
    receiver.answer(() => {})
    const { sender: second } = sender(t, store, { grace: 200, timeout: 10_000 })
    second.start()
    await store.create({ id: 2n, name: 'cut off' })
    const [, cut] = await receiver.waitFor(2)
    const stopping = Date.now()
    await second.stop()
    t.ok(Date.now() - stopping < 2000, `stop took ${Date.now() - stopping} ms`)
    const [pending] = await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }) ?? []
    t.match(pending, { status: 'pending', attempts: 0 }, 'not counted as an attempt')
    t.ok((pending.nextAttemptAt as Date).getTime() <= Date.now(), 'due now: its lease was given back')

    receiver.answer((_, response) => { response.writeHead(204).end() })
    const { sender: third } = sender(t, store, { pollInterval: 60_000 })
    third.start()
    const [,, again] = await receiver.waitFor(3, 2000)
    t.equal(again.headers['webhook-id'], cut.headers['webhook-id'], 'taken at once by the next sender, with the same webhook-id')
  })

  t.test('outcomes are recorded: retries by the schedule, then failed; 410 disables', async (t) => {
    const store = await open(t)
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    const { sender: running, lines } = sender(t, store)
    running.start()
    await store.create({ id: 1n, name: 'failing' })
    const requests = await receiver.waitFor(3)
    await waitUntil('the delivery failed', async () => (await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }))?.[0].status === 'failed')
    t.same(new Set(requests.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id for every attempt')
    const gaps = [requests[1].at - requests[0].at, requests[2].at - requests[1].at]
    t.ok(gaps[0] >= 70 && gaps[1] >= 150, `retried after the schedule's delays, jittered (${gaps.join(', ')} ms)`)
    t.match(lines.find((line) => line.level === 'warn'), { message: 'webhook delivery failed: its retry schedule is spent', fields: { attempt: 3, status: 500 } })
    await sleep(300)
    t.equal(receiver.received.length, 3, 'no attempt after the last')

    receiver.answer((_, response) => { response.writeHead(410).end() })
    await store.create({ id: 2n, name: 'gone' })
    await receiver.waitFor(4)
    await waitUntil('the endpoint is disabled', async () => (await store.webhooks.getEndpoint(endpoint.id))?.enabled === false)
    t.match(lines.find((line) => line.level === 'info' && line.message.includes('410')), { fields: { status: 410 } })
  })

  t.test('succeeded deliveries older than the retention are pruned', async (t) => {
    const store = await open(t)
    const receiver = await startReceiver(t)
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    const { sender: first } = sender(t, store)
    first.start()
    await store.create({ id: 1n, name: 'old' })
    await waitUntil('delivered', async () => (await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }))?.[0]?.status === 'succeeded')
    await first.stop()
    await sleep(20)
    const { sender: second, lines } = sender(t, store, { retention: 10, pruneInterval: 50 })
    second.start()
    await waitUntil('pruned', async () => (await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }))?.length === 0)
    t.match(lines.find((line) => line.message === 'pruned finished webhook deliveries'), { fields: { pruned: 1 } })
  })
})

t.test('a locked store pauses the sender quietly, and it resumes by itself', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = await openAt(t, `sqlite:${path}`, 100)
  const receiver = await startReceiver(t, async (_, response) => {
    await sleep(200)
    response.writeHead(204).end()
  })
  const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  await store.create({ id: 1n, name: 'during the outage' })
  // A lease of 500 ms + 5 s: a finish that cannot be recorded is tried again after it.
  const { sender: running, lines } = sender(t, store, { timeout: 500, pollInterval: 100 })
  running.start()
  await receiver.waitFor(1)
  const other = new Database(path)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  await sleep(800)
  t.same(lines.filter((line) => line.level !== 'debug').map((line) => line.message), ['webhook sender paused: the store is unavailable'], 'one line, however many polls fail')
  other.exec('ROLLBACK')
  await waitUntil('resumed', () => lines.some((line) => line.message === 'webhook sender resumed'))
  const [first, again] = await receiver.waitFor(2, 6000)
  t.equal(again.headers['webhook-id'], first.headers['webhook-id'], 'the attempt whose outcome was lost comes again, with its webhook-id')
  await waitUntil('recorded', async () => (await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }))?.[0].status === 'succeeded')
  t.notOk(lines.some((line) => line.level === 'error'))
})

t.test('the bound in all holds; retries sooner than the next poll are woken for, later ones wait for it', async (t) => {
  const store = await openAt(t, 'sqlite::memory:')
  let inFlight = 0
  let most = 0
  const receiver = await startReceiver(t, async (_, response) => {
    most = Math.max(most, ++inFlight)
    await sleep(50)
    inFlight--
    response.writeHead(204).end()
  })
  const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  for (let i = 1; i <= 3; i++) await store.create({ id: BigInt(i), name: `plant ${i}` })
  const { sender: first } = sender(t, store, { total: 1, pollInterval: 60_000 })
  first.start()
  await receiver.waitFor(3)
  t.equal(most, 1, 'one attempt at a time')
  await first.stop()

  // With polls a minute apart, only a retry's own wake-up brings it back in time.
  receiver.answer((_, response) => { response.writeHead(500).end() })
  const { sender: second } = sender(t, store, { schedule: [100, 60_000], pollInterval: 1000 })
  second.start()
  await store.create({ id: 4n, name: 'failing' })
  const [first4, second4] = (await receiver.waitFor(5, 3000)).slice(3)
  t.ok(second4.at - first4.at < 500, `the first retry came on its own wake-up (${second4.at - first4.at} ms)`)
  await sleep(1500)
  t.equal(receiver.received.length, 5, 'the second, a minute later, is left to the polls')
  const [delivery] = await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }) ?? []
  t.match(delivery, { status: 'pending', attempts: 2 })
  await second.stop()

  // An attempt that ends after stop() began is recorded, and wakes nothing.
  receiver.answer(async (_, response) => {
    await sleep(200)
    response.writeHead(500).end()
  })
  const { sender: third } = sender(t, store, { schedule: [50] })
  third.start()
  await store.create({ id: 5n, name: 'stopping' })
  await receiver.waitFor(6)
  await third.stop()
  const [last] = await store.webhooks.listDeliveries(endpoint.id, { limit: 1 }) ?? []
  t.match(last, { plantId: 5n, status: 'pending', attempts: 1, lastStatus: 500 })
  await sleep(150)
  t.equal(receiver.received.length, 6, 'no retry after the stop')

  // A retry's wake-up still pending is cancelled by the stop.
  const fresh = await openAt(t, 'sqlite::memory:')
  const other = await fresh.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  receiver.answer((_, response) => { response.writeHead(500).end() })
  const { sender: fourth } = sender(t, fresh, { schedule: [300], pollInterval: 60_000 })
  fourth.start()
  await fresh.create({ id: 6n, name: 'retry pending' })
  await receiver.waitFor(7)
  await waitUntil('the failure is recorded', async () => (await fresh.webhooks.listDeliveries(other.id, { limit: 1 }))?.[0].attempts === 1)
  await fourth.stop()
  await sleep(500)
  t.equal(receiver.received.length, 7, 'its retry is not made by a stopped sender')
})

t.test('a retry\'s wake-up that fires before the retry is due is set again for the rest', async (t) => {
  const store = await openAt(t, 'sqlite::memory:')
  const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
  await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  // Node's timers can fire a little before Date.now() reaches their time; these, halfway.
  const armed: number[] = []
  const early = (wake: () => void, ms: number) => {
    armed.push(ms)
    return setTimeout(wake, ms / 2)
  }
  const { sender: running } = sender(t, store, { schedule: [200, 60_000], pollInterval: 60_000, setTimer: early })
  running.start()
  await store.create({ id: 1n, name: 'failing' })
  const [first, retry] = await receiver.waitFor(2, 3000)
  t.ok(retry.at - first.at >= 160, `the retry came no sooner than its time (${retry.at - first.at} ms)`)
  t.ok(armed.length > 1, `its wake-up was set again (${armed.join(', ')} ms)`)
})

t.test('while the process is saturated, one attempt at a time; all its room once the load eases', async (t) => {
  const store = await openAt(t, `sqlite:${join(t.testdir(), 'plants.db')}`)
  let open = 0
  let most = 0
  const receiver = await startReceiver(t, async (_, response) => {
    most = Math.max(most, ++open)
    await sleep(150)
    open--
    response.writeHead(204).end()
  })
  await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  for (let i = 1; i <= 12; i++) await store.create({ id: BigInt(i), name: `plant ${i}` })
  let saturated = true
  const { sender: running } = sender(t, store, { perEndpoint: 4, busy: () => saturated })
  running.start()
  await receiver.waitFor(4, 5000)
  t.equal(most, 1, 'saturated: never more than one in flight')
  saturated = false
  running.wake()
  await receiver.waitFor(12, 5000)
  t.equal(most, 4, 'eased: up to the bound per endpoint')
})

t.test('an endpoint\'s lane is free once its attempt has its outcome, before the outcome is recorded', async (t) => {
  const store = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 })
  t.teardown(() => store.close())
  const receiver = await startReceiver(t)
  await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  for (let i = 1; i <= 8; i++) await store.create({ id: BigInt(i), name: `plant ${i}` })
  // No outcome is recorded until the test says so, as if the store took long to answer.
  const held: Array<() => void> = []
  const webhooks: WebhookStore = {
    ...store.webhooks,
    finish: async (owner, id, outcome) => {
      await new Promise<void>((resolve) => held.push(resolve))
      await store.webhooks.finish(owner, id, outcome)
    }
  }
  const { log } = logger()
  const running = new WebhookSender({ ...BASE, store: webhooks, log, perEndpoint: 4, total: 4, pollInterval: 60_000 })
  t.teardown(() => running.stop())
  running.start()
  await receiver.waitFor(8, 5000)
  // The receiver has the eighth request a moment before the sender has its answer.
  for (let waited = 0; held.length < 8 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(held.length, 8, 'all eight attempted through four lanes, none of their outcomes recorded yet')
  for (const release of held) release()
  for (let waited = 0; (await store.webhooks.backlog()).pending > 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal((await store.webhooks.backlog()).pending, 0, 'then every outcome recorded')
})

t.test('an endpoint\'s next deliveries are claimed while the last round of its lanes waits, not once its queue is empty', async (t) => {
  const store = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 })
  t.teardown(() => store.close())
  // Every request is held until the test answers it.
  const gates: Array<() => void> = []
  const receiver = await startReceiver(t, async (_, response) => {
    await new Promise<void>((resolve) => gates.push(resolve))
    response.writeHead(204).end()
  })
  await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  for (let i = 1; i <= 20; i++) await store.create({ id: BigInt(i), name: `plant ${i}` })
  let answered = 0
  const claims: Array<{ answered: number, got: number }> = []
  const webhooks: WebhookStore = {
    ...store.webhooks,
    claim: async (owner, limit, leaseMs, options) => {
      const at = answered
      const got = await store.webhooks.claim(owner, limit, leaseMs, options)
      if (got.length > 0) claims.push({ answered: at, got: got.length })
      return got
    }
  }
  const { log } = logger()
  const running = new WebhookSender({ ...BASE, store: webhooks, log, perEndpoint: 2, pollInterval: 60_000 })
  t.teardown(() => running.stop())
  running.start()
  // Answered one at a time, each once the attempt that takes its lane has arrived.
  while (answered < 20) {
    await receiver.waitFor(Math.min(answered + 2, 20), 5000)
    for (let waited = 0; gates.length < Math.min(2, 20 - answered) && waited < 5000; waited += 5) await sleep(5)
    gates.shift()?.()
    answered++
  }
  // 16 claimed: 2 in flight, 14 waiting. After 13 answers one waits, less than a round of the
  // two lanes: the other 4 are claimed then. Without the look ahead, after 15, with one lane idle.
  t.same(claims, [{ answered: 0, got: 16 }, { answered: 13, got: 4 }])
  for (let waited = 0; (await store.webhooks.backlog()).pending > 0 && waited < 5000; waited += 10) await sleep(10)
  t.equal((await store.webhooks.backlog()).pending, 0, 'every outcome recorded')
})

t.test('a retry already due when its outcome is recorded wakes at once, with no negative delay', async (t) => {
  const store = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 })
  t.teardown(() => store.close())
  const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
  await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  // The outcome takes longer to record than the retry waits: the retry is due once it is.
  const webhooks: WebhookStore = {
    ...store.webhooks,
    finish: async (owner, id, outcome) => {
      await new Promise((resolve) => setTimeout(resolve, 150))
      await store.webhooks.finish(owner, id, outcome)
    }
  }
  const armed: number[] = []
  const record = (wake: () => void, ms: number) => {
    armed.push(ms)
    return setTimeout(wake, ms)
  }
  const { log } = logger()
  const running = new WebhookSender({ ...BASE, store: webhooks, log, schedule: [50, 60_000], pollInterval: 60_000, setTimer: record })
  t.teardown(() => running.stop())
  running.start()
  await store.create({ id: 1n, name: 'failing' })
  await receiver.waitFor(2, 3000)
  t.ok(armed.length > 0 && armed.every((ms) => ms >= 0), `the retry's wake-up armed with ${armed.join(', ')} ms`)
})

t.test('a fault that is not an outage is logged each time', async (t) => {
  const store = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 })
  const { sender: running, lines } = sender(t, store, { pollInterval: 20, pruneInterval: 20, disableAfter: 20 })
  running.start()
  await store.close()
  await waitUntil('failures are logged', () => lines.filter((line) => line.level === 'error').length >= 5)
  await running.stop()
  const messages = new Set(lines.filter((line) => line.level === 'error').map((line) => line.message))
  t.same([...messages].sort(), ['webhook sender failed claiming deliveries', 'webhook sender failed disabling failing endpoints', 'webhook sender failed expanding events',
    'webhook sender failed pruning deliveries', 'webhook sender failed releasing its leases'])
})

t.test('the leases of the deliveries held are renewed while their attempts run', async (t) => {
  const store = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 })
  t.teardown(() => store.close())
  const receiver = await startReceiver(t, async (_, response) => {
    await sleep(3500)
    response.writeHead(204).end()
  })
  await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
  await store.create({ id: 1n, name: 'slow' })
  const renewed: string[][] = []
  const webhooks: WebhookStore = {
    ...store.webhooks,
    renew: async (owner, ids, leaseMs) => {
      renewed.push([...ids])
      await store.webhooks.renew(owner, ids, leaseMs)
      throw new Error('renewal refused')
    }
  }
  const { log, lines } = logger()
  const running = new WebhookSender({ ...BASE, store: webhooks, log, timeout: 5000, pollInterval: 60_000 })
  t.teardown(() => running.stop())
  running.start()
  const [request] = await receiver.waitFor(1)
  await waitUntil('renewed', () => renewed.length > 0, 5000)
  t.same(renewed[0], [request.headers['webhook-id']], 'the delivery in flight')
  t.ok(lines.some((line) => line.message === 'webhook sender failed renewing its leases'), 'a renewal that fails is logged')
})

t.test('the sender expands a backlog of events in bounded steps, each delivery once, and delivers them', async (t) => {
  const store = await openAt(t, 'sqlite::memory:')
  const receiver = await startReceiver(t)
  for (let i = 0; i < 3; i++) await store.webhooks.createEndpoint({ url: `${receiver.origin}/r${i}`, secret: makeSecret(), events: ['plant.created'] })
  // 250 events of 3 deliveries each: more than a step adds (EXPAND_STEP), and more events than a step looks at.
  await Promise.all(Array.from({ length: 250 }, (_, i) => store.create({ id: BigInt(i), name: `p${i}` })))
  const steps: number[] = []
  const counted: WebhookStore = Object.assign(Object.create(store.webhooks) as WebhookStore, {
    expand: async (limit: number) => {
      const step = await store.webhooks.expand(limit)
      steps.push(step.deliveries)
      return step
    }
  })
  const running = new WebhookSender({ ...BASE, store: counted, log: logger().log, pollInterval: 60_000 })
  t.teardown(() => running.stop())
  running.start()
  await receiver.waitFor(750, 30_000)
  t.ok(steps.every((n) => n <= EXPAND_STEP), `steps of ${steps.join(', ')}`)
  t.equal(steps.reduce((a, b) => a + b, 0), 750)
  t.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 750, 'each delivery once')
})

t.test('a sender that never started stops at once; start and stop are idempotent', async (t) => {
  const store = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 })
  t.teardown(() => store.close())
  const { log } = logger()
  const idle = new WebhookSender({ ...BASE, store: store.webhooks, log })
  idle.wake()
  await idle.stop()
  await idle.stop()
  idle.start()
  const running = new WebhookSender({ ...BASE, store: store.webhooks, log })
  running.start()
  running.start()
  // A wake-up while a claim is under way asks for one more look after it.
  running.wake()
  await running.stop()
  t.pass()
})
