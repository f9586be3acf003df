// The storage code of the reference apps, as a user would write it: one statement
// per request. A create is one INSERT, committed before it returns; an id already
// taken is a replay when the plant is the same and a conflict when it is not.
import Database from 'better-sqlite3'
import pg from 'pg'

export interface NewPlant { id: number, name: string, tag?: string }
export interface Plant { name: string, tag?: string }
export interface Item { id: number, name: string, tag?: string }

export interface Plants {
  create: (plant: NewPlant) => Promise<'created' | 'replayed' | 'conflict'>
  get: (id: number) => Promise<Plant | undefined>
  /** Up to `limit` plants after `after` (from the first when undefined), by id. */
  page: (limit: number, after?: number) => Promise<Item[]>
}

interface Row { id?: number | string, name: string, tag: string | null }
const plant = ({ name, tag }: Row): Plant => tag === null ? { name } : { name, tag }
const item = (row: Row): Item => ({ id: Number(row.id), ...plant(row) })
const outcome = (stored: Row, { name, tag }: NewPlant): 'replayed' | 'conflict' =>
  stored.name === name && stored.tag === (tag ?? null) ? 'replayed' : 'conflict'

/** No database: creates are echoed, reads answered from a Map of plants 1 to `count`. */
export function mapPlants (count: number): Plants {
  const items = Array.from({ length: count }, (_, i) => ({ id: i + 1, name: `plant ${i + 1}`, tag: 'bench' }))
  const byId = new Map(items.map(({ id, ...rest }) => [id, rest]))
  return {
    create: async () => 'created',
    get: async (id) => byId.get(id),
    page: async (limit, after = 0) => items.slice(after, after + limit)
  }
}

/** better-sqlite3, in WAL mode with Plant Store's default synchronous=NORMAL. */
export function sqlitePlants (path: string): Plants {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE IF NOT EXISTS plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT)')
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
  const select = db.prepare<[number], Row>('SELECT name, tag FROM plants WHERE id = ?')
  const page = db.prepare<[number, number], Row>('SELECT id, name, tag FROM plants WHERE id > ? ORDER BY id LIMIT ?')
  return {
    create: async (p) => insert.run(p.id, p.name, p.tag ?? null).changes === 1 ? 'created' : outcome(select.get(p.id) as Row, p),
    get: async (id) => { const row = select.get(id); return row && plant(row) },
    page: async (limit, after = Number.MIN_SAFE_INTEGER) => page.all(after, limit).map(item)
  }
}

/** pg's Pool with as many connections as Plant Store's default DATABASE_POOL_SIZE. */
export async function pgPlants (url: string): Promise<Plants> {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  await pool.query('CREATE TABLE IF NOT EXISTS plants (id BIGINT PRIMARY KEY, name TEXT NOT NULL, tag TEXT)')
  const get = async (id: number): Promise<Row | undefined> => (await pool.query<Row>('SELECT name, tag FROM plants WHERE id = $1', [id])).rows[0]
  return {
    create: async (p) => {
      const { rowCount } = await pool.query('INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [p.id, p.name, p.tag ?? null])
      return rowCount === 1 ? 'created' : outcome(await get(p.id) as Row, p)
    },
    get: async (id) => { const row = await get(id); return row && plant(row) },
    page: async (limit, after = Number.MIN_SAFE_INTEGER) =>
      (await pool.query<Row>('SELECT id, name, tag FROM plants WHERE id > $1 ORDER BY id LIMIT $2', [after, limit])).rows.map(item)
  }
}

/** The plants of DATABASE_URL (`sqlite:<path>` or `postgres://…`), or of a Map of BENCH_PLANTS when it is unset. */
export async function plantsOf (env: NodeJS.ProcessEnv): Promise<Plants> {
  const url = env.DATABASE_URL ?? ''
  if (url.startsWith('sqlite:')) return sqlitePlants(url.slice('sqlite:'.length))
  if (url.startsWith('postgres')) return await pgPlants(url)
  return mapPlants(Number(env.BENCH_PLANTS ?? 0))
}
