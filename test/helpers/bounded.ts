import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Waits for `promise` at most `ms`: past that it rejects with a message naming
 * what was awaited, so that a wait that can never end fails the test at once
 * instead of hanging until tap's timeout ends the whole file. `detail`, if
 * given, is read at that moment and added to the message (a process's output).
 */
export async function bounded<T> (promise: Promise<T>, ms: number, what: string, detail?: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms${detail === undefined ? '' : `\n${detail()}`}`)), ms)
  })
  try {
    return await Promise.race([promise, limit])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Checks `check` every `every` ms until it holds: past `ms` it rejects with a
 * message naming what was awaited (`what`, or what it returns at that moment),
 * as bounded does, instead of polling forever.
 */
export async function pollUntil (check: () => boolean | Promise<boolean>, ms: number, what: string | (() => string), every = 20): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${typeof what === 'string' ? what : what()}: not within ${ms} ms`)
    await sleep(every)
  }
}
