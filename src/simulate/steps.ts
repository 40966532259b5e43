/**
 * Long computations as steps: a generator yields its progress (work done of a total, in its own
 * unit — strategy-minutes for simulations) and returns its result. These drivers run one to its
 * end, at once or giving way to the event loop between steps.
 */

/** Work done of `total`, in the computation's unit. */
export interface Progress {
  done: number;
  total: number;
}

/** Runs `steps` to its end at once, reporting each step's progress; returns its result. */
export function finish<T>(
  steps: Generator<Progress, T, void>,
  onProgress?: (done: number, total: number) => void,
): T {
  let step = steps.next();
  while (!step.done) {
    onProgress?.(step.value.done, step.value.total);
    step = steps.next();
  }
  return step.value;
}

/**
 * Runs `steps` to its end, giving way to the event loop between steps (so signals and timers run
 * during a long computation).
 * @throws the signal's reason when it is aborted (checked between steps).
 */
export async function finishAsync<T>(
  steps: Generator<Progress, T, void>,
  onProgress?: (done: number, total: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  let step = steps.next();
  while (!step.done) {
    onProgress?.(step.value.done, step.value.total);
    await new Promise<void>((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    step = steps.next();
  }
  return step.value;
}

/**
 * Steps that count their own work (`simulation` yields the minutes it has done) as part of a larger
 * computation: each yields `base + done` of `total`, ending with `base + last` where the steps end.
 */
export function* partOf<T>(
  steps: Generator<number, T, void>,
  base: number,
  total: number,
): Generator<Progress, T, void> {
  let step = steps.next();
  while (!step.done) {
    yield { done: base + step.value, total };
    step = steps.next();
  }
  return step.value;
}
