/**
 * Message channels to and from threads (Node worker_threads, Deno Web Workers), so code that
 * farms work out to threads stays runtime-free. `lib/adapters/node/threads.ts` and
 * `lib/adapters/deno/threads.ts` implement both ends. Messages are structured-cloned.
 */

/** The parent's end of one thread: `In` goes to the thread, `Out` comes back. */
export interface ThreadPort<In, Out> {
  post(message: In): void;
  /** `onExit` is called once when the thread is gone for any reason other than `terminate`. */
  listen(onMessage: (message: Out) => void, onExit: (reason: string) => void): void;
  terminate(): void;
}

export type SpawnThread<In, Out> = () => ThreadPort<In, Out>;

/** The thread's end of the channel to its parent. */
export interface ThreadEndpoint<In, Out> {
  post(message: Out): void;
  listen(onMessage: (message: In) => void): void;
}
