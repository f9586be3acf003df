import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook, WebhookVerificationError } from '../../../src/client/verify-webhook.js'

// Signatures made by the standardwebhooks package, as a Standard Webhooks sender makes them.
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
const OTHER = `whsec_${Buffer.alloc(32, 9).toString('base64')}`

function signed (body: string | Buffer, { secret = SECRET, at = new Date(), id = 'msg_1' } = {}): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body as string) }
}

t.test('a signed delivery gives the plant, its id an exact bigint', async (t) => {
  for (const [text, plant] of [
    ['{"id":9007199254740993,"name":"Odd","tag":"prime"}', { id: 9007199254740993n, name: 'Odd', tag: 'prime' }],
    ['{"id":-9223372036854775808,"name":"Min"}', { id: -(2n ** 63n), name: 'Min' }],
    ['{"id":9223372036854775807,"name":"Max"}', { id: 2n ** 63n - 1n, name: 'Max' }],
    ['{"id":7,"name":"Seven","extra":true}', { id: 7n, name: 'Seven' }]
  ] as const) {
    t.strictSame(verifyWebhook(SECRET, signed(text), text), plant, text)
    t.strictSame(verifyWebhook(SECRET, signed(text), Buffer.from(text)), plant, 'a Buffer body')
    t.strictSame(verifyWebhook(SECRET, signed(text), new TextEncoder().encode(text)), plant, 'a Uint8Array body')
  }
})

t.test('headers as Node gives them, or a fetch Headers; two signatures while a secret rotates', async (t) => {
  const body = '{"id":1,"name":"Fern"}'
  // One instant for both signatures: a second that ticks between them would change the signed timestamp.
  const at = new Date()
  const headers = signed(body, { at })
  const shouting = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toUpperCase(), value]))
  t.strictSame(verifyWebhook(SECRET, shouting, body), { id: 1n, name: 'Fern' }, 'any case')
  t.strictSame(verifyWebhook(SECRET, new Headers(headers), body), { id: 1n, name: 'Fern' }, 'a fetch Headers')
  const both = `${signed(body, { secret: OTHER, at })['webhook-signature']} ${headers['webhook-signature']}`
  t.strictSame(verifyWebhook(SECRET, { ...headers, 'webhook-signature': both }, body), { id: 1n, name: 'Fern' }, 'the new secret and the old one')
  t.strictSame(verifyWebhook(OTHER, { ...headers, 'webhook-signature': both }, body), { id: 1n, name: 'Fern' })
  t.strictSame(verifyWebhook(SECRET, { ...headers, 'webhook-signature': both.split(' '), other: undefined }, body), { id: 1n, name: 'Fern' }, 'repeated headers')
})

t.test('anything not to trust is a WebhookVerificationError', async (t) => {
  const body = '{"id":1,"name":"Fern"}'
  const now = Date.now()
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['another secret', () => verifyWebhook(OTHER, signed(body), body), /No matching signature/],
    ['a changed body', () => verifyWebhook(SECRET, signed(body), body.replace('Fern', 'Fake')), /No matching signature/],
    ['a changed id', () => verifyWebhook(SECRET, { ...signed(body), 'webhook-id': 'msg_2' }, body), /No matching signature/],
    ['six minutes old', () => verifyWebhook(SECRET, signed(body, { at: new Date(now - 360_000) }), body), /too old/],
    ['six minutes ahead', () => verifyWebhook(SECRET, signed(body, { at: new Date(now + 360_000) }), body), /too new/],
    ['no signature', () => verifyWebhook(SECRET, { ...signed(body), 'webhook-signature': undefined }, body), /Missing required headers/],
    ['no headers', () => verifyWebhook(SECRET, new Headers(), body), /Missing required headers/],
    ['bytes that are not UTF-8', () => verifyWebhook(SECRET, signed(body), Buffer.from([0x7b, 0xff, 0x7d])), /not valid UTF-8/]
  ]
  for (const text of ['not json', '[1]', 'null', '5', '{"name":"x"}', '{"id":1.5,"name":"x"}', '{"id":"1","name":"x"}', '{"id":1}', '{"id":1,"name":"x","tag":null}']) {
    cases.push([text, () => verifyWebhook(SECRET, signed(text), text), /not a NewPlant/])
  }
  for (const [what, verify, message] of cases) t.throws(verify, WebhookVerificationError, what) && t.throws(verify, { message }, what)
})

t.test('with events: the typed event, ids exact; a body that is not one is a WebhookVerificationError', async (t) => {
  const at = '2026-01-01T12:00:00.000Z'
  for (const [text, event] of [
    [`{"type":"plant.created","timestamp":"${at}","data":{"id":9007199254740993,"name":"Odd","tag":"prime"}}`, { type: 'plant.created', timestamp: at, data: { id: 9007199254740993n, name: 'Odd', tag: 'prime' } }],
    [`{"type":"plant.updated","timestamp":"${at}","data":{"id":-9223372036854775808,"name":"Min"}}`, { type: 'plant.updated', timestamp: at, data: { id: -(2n ** 63n), name: 'Min' } }],
    [`{"type":"plant.deleted","timestamp":"${at}","data":{"id":9223372036854775807}}`, { type: 'plant.deleted', timestamp: at, data: { id: 2n ** 63n - 1n } }]
  ] as const) {
    t.strictSame(verifyWebhook(SECRET, signed(text), text, { events: true }), event, text)
  }
  for (const text of [
    '{"id":1,"name":"Fern"}',
    `{"type":"plant.moved","timestamp":"${at}","data":{"id":1,"name":"Fern"}}`,
    '{"type":"plant.created","data":{"id":1,"name":"Fern"}}',
    `{"type":"plant.created","timestamp":"${at}","data":{"id":1}}`,
    `{"type":"plant.deleted","timestamp":"${at}","data":{"id":"1"}}`,
    `{"type":"plant.deleted","timestamp":"${at}"}`,
    'null'
  ]) {
    t.throws(() => verifyWebhook(SECRET, signed(text), text, { events: true }), { name: 'WebhookVerificationError', message: /not a plant event/ }, text)
  }
  const event = `{"type":"plant.created","timestamp":"${at}","data":{"id":1,"name":"Fern"}}`
  t.throws(() => verifyWebhook(SECRET, signed(event), event), /not a NewPlant/, 'an event is not the origin body')
  t.throws(() => verifyWebhook(OTHER, signed(event), event, { events: true }), /No matching signature/, 'checked before it is read')
})
