// The Express reference: the same minimal correct app in Express 5, with
// express.json(), a constant-time bearer check, and Ajv over the NewPlant schema.
import { timingSafeEqual } from 'node:crypto'
import { Ajv } from 'ajv'
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express'
import { MAX_PAGE, NewPlant } from '../../schemas/index.js'
import type { NewPlant as Body, Plants } from './plants.js'

// int64 is an OpenAPI format that Ajv does not know: the schema's `integer` type checks it.
const validNewPlant = new Ajv({ formats: { int64: true } }).compile<Body>(NewPlant)
const INTEGER = /^-?\d{1,16}$/

const fail = (res: express.Response, status: number, message: string): void => { res.status(status).json({ error: status, message }) }

function bearer (tokens: string[]): RequestHandler {
  const keys = tokens.map((token) => Buffer.from(token))
  return (req, res, next) => {
    const [scheme, token] = (req.headers.authorization ?? '').split(' ')
    const given = Buffer.from(token ?? '')
    // Every key compared, so that the time taken does not tell which one nearly matched.
    let ok = false
    for (const key of keys) ok = (key.length === given.length && timingSafeEqual(key, given)) || ok
    if (scheme?.toLowerCase() === 'bearer' && ok) return next()
    res.set('www-authenticate', 'Bearer')
    fail(res, 401, 'A valid bearer token is required.')
  }
}

export function expressApp (plants: Plants, tokens: string[]): Express {
  const app = express()
  app.get('/ready', (_req, res) => { res.json({ status: 'ok' }) })
  app.use(bearer(tokens), express.json())

  app.post('/plants', async (req, res) => {
    if (!validNewPlant(req.body)) {
      const [error] = validNewPlant.errors ?? []
      return fail(res, 400, `body${error?.instancePath ?? ''} ${error?.message ?? 'is invalid'}`)
    }
    const { id, name, tag } = req.body
    if (await plants.create(req.body) === 'conflict') return fail(res, 409, `Plant ${id} exists with other fields.`)
    res.json(tag === undefined ? { name } : { name, tag })
  })

  app.get('/plants/:id', async (req, res) => {
    if (!INTEGER.test(req.params.id)) return fail(res, 400, 'params/id must be an integer')
    const found = await plants.get(Number(req.params.id))
    if (found === undefined) return fail(res, 404, 'No such plant.')
    res.json(found)
  })

  app.get('/plants', async (req, res) => {
    const { limit = '20', after } = req.query as { limit?: string, after?: string }
    const size = Number(limit)
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) return fail(res, 400, `querystring/limit must be an integer from 1 to ${MAX_PAGE}`)
    if (after !== undefined && !INTEGER.test(after)) return fail(res, 400, 'querystring/after must be an integer')
    const items = await plants.page(size + 1, after === undefined ? undefined : Number(after))
    if (items.length > size) res.set('link', `</plants?limit=${size}&after=${items[size - 1].id}>; rel="next"`)
    res.json(items.slice(0, size))
  })

  app.use(((error: { status?: number, message: string }, _req, res, _next) => {
    const status = error.status ?? 500
    fail(res, status, status < 500 ? error.message : 'Internal error.')
  }) satisfies ErrorRequestHandler)
  return app
}
