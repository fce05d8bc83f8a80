// Waiting: backoff after failures, sleeps that end on an abort signal.

// 250 ms, 500 ms, 1 s, ... up to 10 s for the failures in a row so far,
// each with up to half of it shaved off at random so that many clients do
// not come back in step.
export function backoff(failures) {
  const ms = Math.min(10000, 250 * 2 ** Math.min(Math.max(failures, 1) - 1, 10));
  return Math.round(ms * (0.5 + Math.random() / 2));
}

// Resolves after ms, or at once when signal aborts.
export function sleep(ms, signal) {
  if (signal && signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signal) signal.addEventListener('abort', done, { once: true });
  });
}

// An AbortSignal that aborts on the first of the process signals named
// (SIGTERM and SIGINT by default).
export function stopSignal(signals = ['SIGTERM', 'SIGINT']) {
  return processSignal(signals).signal;
}

// The same, with dispose() to stop listening for the process signals.
export function processSignal(signals = ['SIGTERM', 'SIGINT']) {
  const controller = new AbortController();
  const dispose = () => {
    for (const s of signals) process.removeListener(s, stop);
  };
  const stop = () => {
    dispose();
    controller.abort();
  };
  for (const s of signals) process.on(s, stop);
  return { signal: controller.signal, dispose };
}
