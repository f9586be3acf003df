import type pg from 'pg'

/** Runs `work` between BEGIN and COMMIT on one pooled connection. */
export async function inTransaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const result = await work(client)
    await client.query('COMMIT')
    client.release()
    return result
  } catch (error) {
    // Releasing with the error drops the connection, which rolls the transaction back.
    client.release(error as Error)
    throw error
  }
}
