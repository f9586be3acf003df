import { StoreUnavailableError } from './types.js'

/**
 * `work`'s outcome, or a StoreUnavailableError once `ms` have passed: a caller
 * hears in time even when a driver's own limits, one after another (a connection,
 * then a statement), would add up to more.
 */
export function withDeadline<T> (work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
