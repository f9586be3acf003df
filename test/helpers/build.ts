import { join } from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'

export const TOKEN = 'test-token-for-plants'
export const AUTH = { authorization: `Bearer ${TOKEN}` }

/** A SQLite file of the test's own, in its fixture directory. */
export function sqliteUrl (t: Test): string {
  return `sqlite:${join(t.testdir(), 'plants.db')}`
}

/**
 * Builds the app exactly as the server does (loadConfig, then buildApp with
 * the shared server options) and closes it when the test ends.
 */
export async function build (t: Test, env: Record<string, string> = {}): Promise<FastifyInstance> {
  // No load shedding unless a test asks for it: on a busy test machine a contract
  // test must not turn into a test of load shedding, which has tests of its own.
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:', MAX_EVENT_LOOP_DELAY: '0', ...env })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

/** Asserts a response is exactly the Error body for `status`. */
export function assertError (t: Test, response: LightMyRequestResponse, status: number, message?: RegExp): void {
  t.equal(response.statusCode, status, `status ${status}`)
  t.match(response.headers['content-type'], /^application\/json; charset=utf-8$/)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['error', 'message'], 'exactly error and message')
  t.equal(body.error, status, 'error is the status code')
  t.type(body.message, 'string')
  t.ok(body.message.length > 0, 'message is not empty')
  if (message !== undefined) t.match(body.message, message)
}

export function postPlant (app: FastifyInstance, payload: unknown, headers: Record<string, string> = AUTH) {
  return app.inject({
    method: 'POST',
    url: '/plants',
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload)
  })
}

export function getPlant (app: FastifyInstance, id: string | number | bigint, headers: Record<string, string> = AUTH) {
  return app.inject({ method: 'GET', url: `/plants/${id}`, headers })
}

/** A PATCH of a plant, as a JSON merge patch unless `headers` names another type. */
export function patchPlant (app: FastifyInstance, id: string | number | bigint, payload: unknown, headers: Record<string, string> = AUTH) {
  return app.inject({
    method: 'PATCH',
    url: `/plants/${id}`,
    headers: { 'content-type': 'application/merge-patch+json', ...headers },
    payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload)
  })
}
