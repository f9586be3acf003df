import type Database from 'better-sqlite3'
import type { Plant } from '../../../schemas/plant.js'
import type { WebhookEventType } from '../webhook-types.js'
import { applyChange, matches, refuses, samePlant, toPlant, toRecord, type CreateResult, type ListQuery, type PlantRecord, type UpdateResult, type Write, type WriteResult } from '../types.js'

// Rows are read as arrays: no object per row that is dropped as soon as its plant is made.
type Row = [name: string, tag: string | null]
type ListRow = [id: bigint, name: string, tag: string | null]

/** The plants table's statements, prepared once. */
export function plantStatements (db: Database.Database, changed: (type: WebhookEventType, plant: PlantRecord | { id: bigint }) => void) {
  const insert = db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
  const rewrite = db.prepare<[string, string | null, bigint]>('UPDATE plants SET name = ?, tag = ? WHERE id = ?')
  const removal = db.prepare<[bigint]>('DELETE FROM plants WHERE id = ?')
  const select = db.prepare<[bigint], Row>('SELECT name, tag FROM plants WHERE id = ?').raw(true)
  // One statement per shape of page, each served by an index from its first key.
  const pages = {
    first: db.prepare<[number], ListRow>('SELECT id, name, tag FROM plants ORDER BY id LIMIT ?'),
    after: db.prepare<[bigint, number], ListRow>('SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?'),
    firstTagged: db.prepare<[string, number], ListRow>('SELECT id, name, tag FROM plants WHERE tag = ? ORDER BY id LIMIT ?'),
    afterTagged: db.prepare<[string, bigint, number], ListRow>('SELECT id, name, tag FROM plants WHERE tag = ? AND id > ? ORDER BY id LIMIT ?')
  }
  for (const page of Object.values(pages)) page.safeIntegers(true).raw(true)

  // The primary key decides: the insert either takes the id or leaves the row that holds it.
  function create (plant: PlantRecord): CreateResult {
    if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
      changed('plant.created', plant)
      return { outcome: 'created', plant: toPlant(plant.name, plant.tag) }
    }
    const [name, tag] = select.get(plant.id) as Row
    const stored = toPlant(name, tag)
    return { outcome: samePlant(stored, plant) ? 'replayed' : 'conflict', plant: stored }
  }

  // The batch's transaction holds the write lock: what is read here stays so until the commit.
  function stored (id: bigint, ifMatch: readonly string[] | undefined): Plant | undefined {
    const row = select.get(id)
    const plant = row === undefined ? undefined : toPlant(row[0], row[1])
    return plant !== undefined && matches(plant, ifMatch) ? plant : undefined
  }

  function update (id: bigint, write: Write & { op: 'update' }): UpdateResult | undefined {
    const current = stored(id, write.ifMatch)
    if (current === undefined) return undefined
    if (refuses(current, write.ifNoneMatch)) return { outcome: 'refused', plant: current }
    const plant = applyChange(current, write.change)
    if (samePlant(plant, current)) return { outcome: 'unchanged', plant }
    rewrite.run(plant.name, plant.tag ?? null, id)
    changed('plant.updated', { id, ...plant })
    return { outcome: 'updated', plant }
  }

  function remove ({ id, ifMatch, ifNoneMatch }: Write & { op: 'delete' }): boolean | 'refused' {
    if (ifMatch !== undefined || ifNoneMatch !== undefined) {
      const current = stored(id, ifMatch)
      if (current === undefined) return false
      if (refuses(current, ifNoneMatch)) return 'refused'
    }
    if (removal.run(id).changes === 0) return false
    changed('plant.deleted', { id })
    return true
  }

  return {
    write (write: Write): WriteResult {
      switch (write.op) {
        case 'create': return create(write.plant)
        case 'update': return update(write.id, write)
        case 'delete': return remove(write)
      }
    },

    get (id: bigint): Plant | undefined {
      const row = select.get(id)
      return row === undefined ? undefined : toPlant(row[0], row[1])
    },

    list ({ limit, tag, after }: ListQuery): PlantRecord[] {
      const rows = tag === undefined
        ? (after === undefined ? pages.first.all(limit) : pages.after.all(after, limit))
        : (after === undefined ? pages.firstTagged.all(tag, limit) : pages.afterTagged.all(tag, after, limit))
      return rows.map(([id, name, tag]) => toRecord(id, name, tag))
    }
  }
}
