import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Test } from 'tap'

// The local Redis, in a database of the tests' own; each test writes under a prefix of its own.
const REDIS = { host: '127.0.0.1', port: 6379, db: 7 }

/** The tests' Redis, or a proxy in front of it listening on `port`. */
export const redisUrl = (port = REDIS.port) => `redis://${REDIS.host}:${port}/${REDIS.db}`

/** A key prefix of the test's own, whose keys are removed when the test ends. */
export async function prefixFor (t: Test): Promise<{ prefix: string, keys: () => Promise<string[]> }> {
  const prefix = `plant-store-test:${randomBytes(6).toString('hex')}:`
  const redis = new Redis({ ...REDIS, lazyConnect: true })
  await redis.connect()
  const keys = () => redis.keys(`${prefix}*`)
  t.teardown(async () => {
    const left = await keys()
    if (left.length > 0) await redis.del(...left)
    redis.disconnect()
  })
  return { prefix, keys }
}
