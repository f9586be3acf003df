// When a failed delivery is tried again: the schedule's delay, jittered so that the deliveries that failed
// together (a receiver that was down) do not all come back in the same instant.

export const JITTER = 0.2

/** `delay` moved by up to JITTER either way, evenly; `random` is in [0, 1). */
export function withJitter (delay: number, random: () => number = Math.random): number {
  return Math.round(delay * (1 - JITTER + 2 * JITTER * random()))
}

/** The time of the next attempt once `attempts` have failed, or undefined when the schedule is spent. */
export function nextAttemptAt (schedule: readonly number[], attempts: number, now: number = Date.now(), random?: () => number): Date | undefined {
  const delay = schedule[attempts - 1]
  return delay === undefined ? undefined : new Date(now + withJitter(delay, random))
}
