import { PlantStoreError } from './errors.js'
import { fail, readBody, type CallOptions, type Send } from './request.js'

/** An item of a page as JSON gives it. */
export type Raw = Record<string, any>

/** One page of a listing; `nextCursor` is there while more follow. */
export interface Page<T> {
  items: T[]
  nextCursor?: string
}

const LINK = /<([^>]*)>([^,]*)/g
const REL = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;]+))/i

/** The `rel="next"` target of a Link header (RFC 8288), resolved against the request URL. */
export function nextLink (header: string | null, url: URL): URL | undefined {
  for (const [, target, params] of header?.matchAll(LINK) ?? []) {
    const rel = REL.exec(params)
    if (rel !== null && (rel[1] ?? rel[2]).toLowerCase().split(/\s+/).includes('next')) return new URL(target, url)
  }
  return undefined
}

/** GET one page: its items, each made by `item`, and the URL of the next page, if any. */
async function fetchPage<T> (send: Send, url: URL, item: (raw: Raw) => T, options?: CallOptions): Promise<{ items: T[], next?: URL }> {
  const call = { method: 'GET', url, repeat: 'idempotent' } as const
  const answer = await send(call, options)
  const body = readBody(call, answer, 200)
  if (!Array.isArray(body)) throw fail(call, answer)
  const next = nextLink(answer.headers.get('link'), url)
  // The token goes only where the client was pointed: a link elsewhere is not followed.
  if (next !== undefined && next.origin !== url.origin) {
    throw new PlantStoreError({ status: 200, message: `The next link of ${url.href} leaves its origin (${next.origin}): not followed.`, method: 'GET', url: url.href })
  }
  return { items: body.map(item), next }
}

export async function page<T> (send: Send, url: URL, item: (raw: Raw) => T, options?: CallOptions): Promise<Page<T>> {
  const { items, next } = await fetchPage(send, url, item, options)
  const cursor = next?.searchParams.get('cursor')
  return cursor == null ? { items } : { items, nextCursor: cursor }
}

/** Every item from `url` on, following the next links page after page. */
export async function * walk<T> (send: Send, url: URL, item: (raw: Raw) => T, options?: CallOptions): AsyncGenerator<T, void, undefined> {
  for (let next: URL | undefined = url; next !== undefined;) {
    const result: { items: T[], next?: URL } = await fetchPage(send, next, item, options)
    yield * result.items
    next = result.next
  }
}
