import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { openBrowser } from '../helpers/browser.js'
import { build, postPlant, TOKEN } from '../helpers/build.js'

interface Answer { status: number, link: string | null, retryAfter: string | null, wwwAuthenticate: string | null, body: unknown }
interface Change { status: number, etag: string | null, body: unknown }

// Runs in the page: what its script can read of the API's answers, through CORS.
async function walk ({ api, token }: { api: string, token: string }) {
  const read = async (response: Response): Promise<Answer> => ({
    status: response.status,
    link: response.headers.get('Link'),
    retryAfter: response.headers.get('Retry-After'),
    wwwAuthenticate: response.headers.get('WWW-Authenticate'),
    body: await response.json()
  })
  const headers = { Authorization: `Bearer ${token}` }
  const firstResponse = await fetch(`${api}/plants?limit=2`, { headers })
  const first = await read(firstResponse)
  // RFC 8288: the target is a reference relative to the URL of the answer that carries it.
  const target = /^<([^>]*)>; rel="next"$/.exec(first.link ?? '')?.[1] ?? ''
  const nextUrl = new URL(target, firstResponse.url).href
  const second = await read(await fetch(nextUrl, { headers }))
  const unauthenticated = await read(await fetch(`${api}/plants?limit=2`))
  const limited = await read(await fetch(`${api}/plants?limit=2`, { headers: { Authorization: 'Bearer a-guess' } }))
  const servedAfter = await read(await fetch(`${api}/plants?limit=2`, { headers }))
  return { first, nextUrl, second, unauthenticated, limited, servedAfter }
}

// Runs in the page: a change made only to the plant as the page read it, through CORS (a preflight
// for PATCH, its Content-Type and If-Match; the ETag exposed), and a read that finds it unchanged.
async function edit ({ api, token }: { api: string, token: string }) {
  const authorization = `Bearer ${token}`
  const answer = async (response: Response): Promise<Change> =>
    ({ status: response.status, etag: response.headers.get('ETag'), body: response.status === 304 ? null : await response.json() })
  const patch = (etag: string, name: string) => fetch(`${api}/plants/1`, {
    method: 'PATCH',
    headers: { Authorization: authorization, 'Content-Type': 'application/merge-patch+json', 'If-Match': etag },
    body: JSON.stringify({ name })
  })
  const read = await answer(await fetch(`${api}/plants/1`, { headers: { Authorization: authorization } }))
  const changed = await answer(await patch(read.etag ?? '', 'Monstera deliciosa'))
  const stale = await answer(await patch(read.etag ?? '', 'Swiss cheese plant'))
  const unchanged = await answer(await fetch(`${api}/plants/1`, { headers: { Authorization: authorization, 'If-None-Match': changed.etag ?? '' } }))
  const deleted = await fetch(`${api}/plants/2`, { method: 'DELETE', headers: { Authorization: authorization, 'If-Match': '"stale"' } })
  return { read, changed, stale, unchanged, deleted: deleted.status }
}

t.test('a page of another origin lists the plants page by page, following the Link, and reads the errors', async (t) => {
  // The page's own server: a different port is a different origin.
  const pages = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>A client of the plant store</title>')
  })
  pages.listen(0, '127.0.0.1')
  await once(pages, 'listening')
  t.teardown(() => { pages.closeAllConnections(); pages.close() })
  const { port } = pages.address() as AddressInfo
  const pageOrigin = `http://127.0.0.1:${port}`

  // One failed authentication is allowed per window: the second failure is a 429.
  const app = await build(t, { CORS_ORIGINS: pageOrigin, AUTH_FAILURE_LIMIT: '1' })
  const api = await app.listen({ port: 0, host: '127.0.0.1' })
  for (const [id, name] of [[1, 'Monstera'], [2, 'Fern'], [3, 'Aloe'], [4, 'Palm']] as const) {
    t.equal((await postPlant(app, { id, name })).statusCode, 200)
  }

  const context = await openBrowser(t, t.testdir())
  if (context === undefined) return
  const page = context.pages()[0] ?? await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (error) => { problems.push(`page: ${error.message}`) })

  await page.goto(`${pageOrigin}/`)
  const seen = await page.evaluate(walk, { api, token: TOKEN })

  t.equal(seen.first.status, 200)
  t.same(seen.first.body, [{ id: 1, name: 'Monstera' }, { id: 2, name: 'Fern' }], 'the first page')
  t.match(seen.first.link, /^<\/plants\?limit=2&cursor=[\w-]+>; rel="next"$/, 'the page reads the Link header')
  t.match(seen.nextUrl, new RegExp(`^${api}/plants\\?limit=2&cursor=`), 'resolved against the answer\'s URL: the API, not the page')
  t.equal(seen.second.status, 200)
  t.same(seen.second.body, [{ id: 3, name: 'Aloe' }, { id: 4, name: 'Palm' }], 'the second page')
  t.equal(seen.second.link, null, 'the last page has no next link')

  t.equal(seen.unauthenticated.status, 401)
  t.same(seen.unauthenticated.body, { error: 401, message: 'Authentication required: send an Authorization: Bearer <token> header.' }, 'the page reads the 401 body')
  t.equal(seen.unauthenticated.wwwAuthenticate, 'Bearer realm="plant-store"', 'and its WWW-Authenticate')
  t.equal(seen.limited.status, 429)
  t.match(seen.limited.retryAfter, /^\d+$/, 'the page reads Retry-After')
  t.equal(seen.servedAfter.status, 200, 'the valid token is still served')

  const edited = await page.evaluate(edit, { api, token: TOKEN })
  t.equal(edited.read.status, 200)
  t.match(edited.read.etag, /^"[\w-]+"$/, 'the page reads the ETag')
  t.equal(edited.changed.status, 200, 'a PATCH with If-Match passes the preflight')
  t.same(edited.changed.body, { name: 'Monstera deliciosa' })
  t.not(edited.changed.etag, edited.read.etag, 'and reads the new ETag')
  t.equal(edited.stale.status, 412, 'the second change made against the old ETag is refused')
  t.match(edited.stale.body, { error: 412 }, 'the page reads the 412')
  t.equal(edited.unchanged.status, 304, 'If-None-Match passes the preflight: unchanged since')
  t.equal(edited.unchanged.etag, edited.changed.etag, 'with its ETag')
  t.equal(edited.deleted, 412, 'a DELETE with If-Match too')
  t.same((await app.inject({ url: '/plants/1', headers: { authorization: `Bearer ${TOKEN}` } })).json(), { name: 'Monstera deliciosa' })
  t.same(problems, [])

  // The same page served from an origin CORS_ORIGINS does not name reads nothing.
  await page.goto(`http://localhost:${port}/`)
  const elsewhere = await page.evaluate(async (url) => {
    try {
      await fetch(url)
      return 'read'
    } catch (error) {
      return (error as Error).name
    }
  }, `${api}/plants?limit=2`)
  t.equal(elsewhere, 'TypeError', 'another origin: the browser refuses the answer')
})
