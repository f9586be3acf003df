import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { AUTH } from './build.js'

export interface Listed { id: string, name: string, tag?: string }

/** GET on the service; the body's ids are kept as exact decimal text. */
export async function list (app: FastifyInstance, url: string): Promise<{ res: LightMyRequestResponse, items: Listed[], next?: string }> {
  const res = await app.inject({ url, headers: AUTH })
  // Quote every id before JSON.parse, so that none is rounded.
  const items = res.statusCode === 200 ? JSON.parse(res.body.replace(/"id":(-?\d+)/g, '"id":"$1"')) as Listed[] : []
  const link = res.headers.link as string | undefined
  const match = link === undefined ? null : /^<([^>]+)>; rel="next"$/.exec(link)
  if (match === null) return { res, items }
  // Resolved against the request URL, as RFC 8288 says a client does.
  const next = new URL(match[1], `http://host${url}`)
  return { res, items, next: next.pathname + next.search }
}

/** Follows every `next` link from `url`, returning each page's items in order. */
export async function walk (app: FastifyInstance, url: string, between?: () => Promise<void>): Promise<Listed[][]> {
  const pages: Listed[][] = []
  for (let next: string | undefined = url; next !== undefined;) {
    const page = await list(app, next)
    if (page.res.statusCode !== 200) throw new Error(`${next}: ${page.res.statusCode} ${page.res.body}`)
    pages.push(page.items)
    next = page.next
    if (between !== undefined) await between()
  }
  return pages
}
