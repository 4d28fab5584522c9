/**
 * Deadlines for the steps that stop what a test started: a stop that never finishes fails the
 * test saying what did not happen, instead of leaving it (and the test) hanging.
 */

/** Settles as `promise` does, or rejects saying `what` did not happen within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
