/**
 * Handle lifetimes for a block of code: what the block `manage`s is disposed when it ends,
 * however it ends (return, early return, throw), newest first; handles already dead (a value
 * passed on and freed by its new owner) are skipped.
 *
 * The same idea as quickjs-emscripten's `Scope`, written here because that one is a value import
 * of quickjs-emscripten-core (which engine.ts loads only with the engine, so processes that never
 * run a sandbox do not pay for it) and allocates a Set and a Lifetime per scope. This one is a
 * plain array and can be reused (`dispose` empties it), for paths run per request.
 */

/** What a scope can own: QuickJS handles, deferred promises. */
interface Disposable {
  readonly alive: boolean;
  dispose(): void;
}

export class HandleScope {
  private readonly owned: Disposable[] = [];

  /** Disposes `lifetime` when the scope ends; returns it. */
  manage<T extends Disposable>(lifetime: T): T {
    this.owned.push(lifetime);
    return lifetime;
  }

  /** Disposes what it manages (newest first) and is ready for reuse. */
  dispose(): void {
    // Popped as it goes, so a reused scope never disposes a handle twice (even after a throw).
    for (let h = this.owned.pop(); h !== undefined; h = this.owned.pop()) if (h.alive) h.dispose();
  }
}

/** Runs `block` with a fresh scope, disposed when it returns or throws. Not for async blocks. */
export function withScope<R>(block: (scope: HandleScope) => R): R {
  const scope = new HandleScope();
  try {
    return block(scope);
  } finally {
    scope.dispose();
  }
}
