import type pg from 'pg'

/** Runs `work` between BEGIN and COMMIT on one pooled connection. */
export async function inTransaction<T> (pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, lost: (error: Error) => void): Promise<T> {
  const client = await pool.connect()
  client.on('error', lost)
  let result: T
  try {
    await client.query('BEGIN')
    result = await work(client)
    await client.query('COMMIT')
  } catch (error) {
    client.off('error', lost)
    // Releasing with the error drops the connection, which rolls the transaction back.
    client.release(error as Error)
    throw error
  }
  client.off('error', lost)
  client.release()
  return result
}
