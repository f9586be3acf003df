/**
 * When a failed delivery is tried again: after the schedule's delay for the attempts made so far, give or take
 * 20%, so that the deliveries that failed together.
 */

export const JITTER = 0.2

/** `delay` moved by up to ±20%, evenly; `random` is in [0, 1). */
export function withJitter (delay: number, random: () => number = Math.random): number {
  return Math.round(delay * (1 - JITTER + 2 * JITTER * random()))
}

/** The time of the next attempt once `attempts` attempts. */
export function nextAttemptAt (schedule: readonly number[], attempts: number, now: number = Date.now(), random?: () => number): Date | undefined {
  const delay = schedule[attempts - 1]
  return delay === undefined ? undefined : new Date(now + withJitter(delay, random))
}
