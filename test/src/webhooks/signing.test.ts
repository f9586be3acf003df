import t from 'tap'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { makeSecret, signatureHeaders } from '../../../src/webhooks/signing.js'

const BODY = '{"id":9007199254740993,"name":"Ficus lyrata 🌿","tag":"indoor"}'

t.test('a new secret is whsec_ and base64 of 32 random bytes', async (t) => {
  const secret = makeSecret()
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.equal(Buffer.from(secret.slice(6), 'base64').length, 32)
  t.not(makeSecret(), secret)
})

t.test('the example of the specification signs as published', async (t) => {
  const headers = signatureHeaders('msg_p5jXN8AQM9LWM0D4loKWxJek', '{"test": 2432232314}', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], 1614265330_000)
  t.same(headers, {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
  })
})

t.test('the standardwebhooks package verifies what is signed, and nothing else', async (t) => {
  const secret = makeSecret()
  const headers = signatureHeaders('d-1', BODY, [secret])
  t.equal(headers['webhook-timestamp'], String(Math.floor(Date.now() / 1000)), 'the timestamp is now, in seconds')
  t.same(new Webhook(secret).verify(BODY, { ...headers }), JSON.parse(BODY))
  t.same(new Webhook(secret).verify(Buffer.from(BODY), { ...headers }), JSON.parse(BODY), 'the body as bytes')
  t.throws(() => new Webhook(makeSecret()).verify(BODY, { ...headers }), WebhookVerificationError, 'another secret')
  t.throws(() => new Webhook(secret).verify(BODY.replace('indoor', 'outdoor'), { ...headers }), WebhookVerificationError, 'another body')
  t.throws(() => new Webhook(secret).verify(BODY, { ...headers, 'webhook-id': 'd-2' }), WebhookVerificationError, 'another id')
  const old = signatureHeaders('d-1', BODY, [secret], Date.now() - 10 * 60_000)
  t.throws(() => new Webhook(secret).verify(BODY, { ...old }), /too old/, 'the receiver bounds replays by the timestamp')
})

t.test('during a rotation each secret signs, and a receiver with either one verifies', async (t) => {
  const [current, previous] = [makeSecret(), makeSecret()]
  const headers = signatureHeaders('d-7', BODY, [current, previous])
  const signatures = headers['webhook-signature'].split(' ')
  t.equal(signatures.length, 2, 'space-separated, one per secret')
  for (const signature of signatures) t.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/)
  t.same(new Webhook(current).verify(BODY, { ...headers }), JSON.parse(BODY), 'the new secret')
  t.same(new Webhook(previous).verify(BODY, { ...headers }), JSON.parse(BODY), 'the previous secret')
  t.equal(signatureHeaders('d-7', BODY, [current])['webhook-signature'], signatures[0], 'the current secret signs first')
})

t.test('a secret without its prefix is read the same', async (t) => {
  const secret = makeSecret()
  t.same(signatureHeaders('x', '{}', [secret.slice(6)], 0), signatureHeaders('x', '{}', [secret], 0))
})

t.test('past a thousand secrets the keys are made again as used, and every signature still verifies', async (t) => {
  const secrets = Array.from({ length: 1100 }, () => makeSecret())
  // Twice over, so that the second round signs with keys made again after the first filled the cache.
  for (const round of [1, 2]) {
    const failed = secrets.filter((secret) => {
      const headers = signatureHeaders(`d-${round}`, BODY, [secret])
      try {
        new Webhook(secret).verify(BODY, { ...headers })
        return false
      } catch {
        return true
      }
    })
    t.equal(failed.length, 0, `round ${round}: every one of ${secrets.length} verifies`)
  }
  // The same secret with and without its prefix signs alike.
  const bare = secrets[0].slice('whsec_'.length)
  t.equal(signatureHeaders('d', BODY, [bare], 0)['webhook-signature'], signatureHeaders('d', BODY, [secrets[0]], 0)['webhook-signature'])
})
