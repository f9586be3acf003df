import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { AUTH } from './build.js'

/** An event of the feed as a test compares it: the plant's id kept as exact decimal text. */
export interface SeenEvent { id: string, type: string, timestamp: string, data: { id: string, name?: string, tag?: string } }

/** GET /events…: its events (ids exact) and its next link, resolved against the request URL. */
export async function readEvents (app: FastifyInstance, url: string, headers: Record<string, string> = AUTH): Promise<{ res: LightMyRequestResponse, events: SeenEvent[], next: string }> {
  const res = await app.inject({ url, headers })
  const events = res.statusCode === 200 ? JSON.parse(res.body.replace(/"id":(-?\d+)/g, '"id":"$1"')) as SeenEvent[] : []
  const match = /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link))
  const next = match === null ? '' : new URL(match[1], `http://host${url}`)
  return { res, events, next: next === '' ? '' : next.pathname + next.search }
}

/** Follows `next` from `url` until a page comes back empty; every event seen, and the last next link. */
export async function readAll (app: FastifyInstance, url: string): Promise<{ events: SeenEvent[], next: string, pages: number[] }> {
  const events: SeenEvent[] = []
  const pages: number[] = []
  for (let next = url; ;) {
    const page = await readEvents(app, next)
    if (page.res.statusCode !== 200) throw new Error(`${next}: ${page.res.statusCode} ${page.res.body}`)
    pages.push(page.events.length)
    events.push(...page.events)
    if (page.events.length === 0) return { events, next: page.next, pages }
    next = page.next
  }
}

/** What an event says, without its id and time: its type and data, for comparing with the changes made. */
export const change = (event: SeenEvent) => `${event.type} ${JSON.stringify(event.data)}`
