import type { Plant } from '../../../schemas/plant.js'
import { stillWaiting, type Waiter } from '../group-commit.js'
import { samePlant, StoreUnavailableError, toPlant, toRecord, type CreateResult, type ListQuery, type PlantRecord, type Write, type WriteResult } from '../types.js'
import { changeWrites, type OutboxNotice } from './changes.js'
import type { Queries, Query } from './query.js'

interface Row { id: string, name: string, tag: string | null }

const SELECT_MANY = 'SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])'
const COLUMNS = 'SELECT id, name, tag FROM plants'
// One statement per shape of page, each served by an index from its first key.
const PAGES = {
  first: `${COLUMNS} ORDER BY id LIMIT $1`,
  after: `${COLUMNS} WHERE id > $2 ORDER BY id LIMIT $1`,
  firstTagged: `${COLUMNS} WHERE tag = $2 ORDER BY id LIMIT $1`,
  afterTagged: `${COLUMNS} WHERE tag = $2 AND id > $3 ORDER BY id LIMIT $1`
}

type WriteWaiter = Waiter<Write, WriteResult>

/** The plants of `ids` (decimal text, each within int64) that exist, by id: one statement for them all. */
export async function plantsById (query: Query, ids: string[]): Promise<Map<string, Plant>> {
  const { rows } = await query<Row>('plant-store-select-many', SELECT_MANY, [ids])
  return new Map(rows.map((row) => [row.id, toPlant(row.name, row.tag)]))
}

/** Inserts new plants (ON CONFLICT DO NOTHING) through `write` and returns the ids it inserted, as text. */
export type InsertPlants = (plants: PlantRecord[], write: Query) => Promise<string[]>

/** The plants table: pages, and the writes of one group-commit batch with their outbox rows. */
export function plantQueries ({ read }: Pick<Queries, 'read'>, insert: InsertPlants, notice: OutboxNotice) {
  return {
    /** Commits a batch in arrival order through `write`. */
    async commit (batch: WriteWaiter[], write: Query): Promise<void> {
      const { createAll } = batchWrites(write, insert)
      const { updateAll, deleteAll } = changeWrites(write, notice)
      for (let start = 0, end = 1; start < batch.length; start = end++) {
        const { op } = batch[start].item
        const ids = new Set([idOf(batch[start].item)])
        for (; end < batch.length && batch[end].item.op === op; end++) {
          if (op === 'create') continue
          if (ids.has(idOf(batch[end].item))) break
          ids.add(idOf(batch[end].item))
        }
        // Writes whose callers timed out or left while an earlier run committed are not sent.
        const run = batch.slice(start, end).filter(stillWaiting)
        if (run.length > 0) await (op === 'create' ? createAll(run) : op === 'update' ? updateAll(run) : deleteAll(run))
      }
    },

    async list ({ limit, tag, after }: ListQuery): Promise<PlantRecord[]> {
      const key = tag === undefined ? (after === undefined ? 'first' : 'after') : (after === undefined ? 'firstTagged' : 'afterTagged')
      const values: unknown[] = [limit]
      if (tag !== undefined) values.push(tag)
      if (after !== undefined) values.push(String(after))
      const { rows } = await read<Row>(`plant-store-page-${key}`, PAGES[key], values)
      return rows.map((row) => toRecord(BigInt(row.id), row.name, row.tag))
    }
  }
}

function idOf (write: Write): bigint {
  return write.op === 'create' ? write.plant.id : write.id
}

/** The statements of one batch's creates, sent through `write`. */
function batchWrites (write: Query, insert: InsertPlants) {
  /** Commits `plants` with one INSERT and, for the ids it found taken, one SELECT. */
  async function insertMany (plants: PlantRecord[]): Promise<CreateResult[]> {
    // The first create of an id, in arrival order, is the one that may insert it.
    const first = new Map<string, number>()
    plants.forEach((plant, i) => { if (!first.has(String(plant.id))) first.set(String(plant.id), i) })
    // Ascending ids: batches of several instances then wait on each other's rows in one order.
    let rows = [...first.values()].map((i) => plants[i]).sort((a, b) => (a.id < b.id ? -1 : 1))
    const created = new Set<string>()
    const stored = new Map<string, Plant>()
    while (rows.length > 0) {
      for (const id of await insert(rows, write)) created.add(id)
      const taken = rows.filter((plant) => !created.has(String(plant.id)))
      const held = taken.length === 0 ? new Map<string, Plant>() : await plantsById(write, taken.map((plant) => String(plant.id)))
      for (const [id, plant] of held) stored.set(id, plant)
      rows = taken.filter((plant) => !held.has(String(plant.id)))
    }
    for (const [id, i] of first) if (created.has(id)) stored.set(id, toPlant(plants[i].name, plants[i].tag))
    return plants.map((plant, i) => {
      const id = String(plant.id)
      const holder = stored.get(id) as Plant
      if (created.has(id) && first.get(id) === i) return { outcome: 'created', plant: holder }
      return { outcome: samePlant(holder, plant) ? 'replayed' : 'conflict', plant: holder }
    })
  }

  async function createAll (batch: WriteWaiter[]): Promise<void> {
    try {
      const results = await insertMany(batch.map((waiter) => (waiter.item as Write & { op: 'create' }).plant))
      batch.forEach((waiter, i) => waiter.resolve(results[i]))
    } catch (error) {
      if (batch.length === 1 || error instanceof StoreUnavailableError) {
        for (const waiter of batch) waiter.reject(error)
        return
      }
      // One row the server refuses must not fail the others: each goes alone, in arrival order.
      for (const waiter of batch) if (waiter.waiting) await createAll([waiter])
    }
  }

  return { createAll }
}
