/**
 * Waits for `promise` at most `ms`: past that it rejects with a message naming
 * what was awaited, so that a wait that can never end fails the test at once
 * instead of hanging until tap's timeout ends the whole file.
 */
export async function bounded<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, limit])
  } finally {
    clearTimeout(timer)
  }
}
