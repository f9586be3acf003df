import type { ListQuery, PlantRecord } from './types.js'

/** The pages asked for in one turn of the event loop with the same query. */
export function samePages (read: (query: ListQuery) => Promise<PlantRecord[]>): (query: ListQuery) => Promise<PlantRecord[]> {
  let turn = new Map<string, Promise<PlantRecord[]>>()
  return (query) => {
    // A tag is JSON-quoted, so that no tag can pass for another query's limit or cursor.
    const key = `${query.limit} ${query.after ?? ''} ${query.tag === undefined ? '' : JSON.stringify(query.tag)}`
    let page = turn.get(key)
    if (page === undefined) {
      // setImmediate runs after the poll phase: the requests read in this turn share it.
      if (turn.size === 0) setImmediate(() => { turn = new Map() })
      page = read(query)
      turn.set(key, page)
    }
    return page.then((records) => records.slice())
  }
}
