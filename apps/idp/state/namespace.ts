/**
 * One issuer's view of the shared state store. Issuers by path (`/{name}/...`) share one store
 * (and one database between instances); what belongs to an issuer (sessions, codes, tokens,
 * device grants, replay entries, back-channel registrations) is kept under keys and groups that
 * start with the issuer's namespace, so a token, code or session of one issuer is unknown at
 * another. Scenarios, signing keys and settings are the provider's, shared by every issuer.
 *
 * Namespaces: "/" for the configured issuer, "{name}/" for an issuer by path. A name never
 * contains "/", and only the configured issuer's keys start with "/", so no key of one namespace
 * can be spelled in another (whatever a client sends).
 */
import type { IdpStateStore, RecordOptions, StateKind } from "./store.ts";

/** Kinds shared by every issuer: everything else is per issuer. */
const SHARED_KINDS: ReadonlySet<StateKind> = new Set<StateKind>(["scenario", "key", "setting"]);

const ROOT_NAMESPACE = "/";
export const namespaceOf = (issuerName: string | undefined) => (issuerName === undefined ? ROOT_NAMESPACE : `${issuerName}/`);

export function namespacedStore(inner: IdpStateStore, ns: string): IdpStateStore {
  const k = (kind: StateKind, key: string) => (SHARED_KINDS.has(kind) ? key : ns + key);
  const opts = (kind: StateKind, options: RecordOptions | undefined): RecordOptions | undefined =>
    options?.group === undefined || SHARED_KINDS.has(kind) ? options : { ...options, group: ns + options.group };
  const own = <T>(kind: StateKind, rows: [string, T][]): [string, T][] =>
    SHARED_KINDS.has(kind) ? rows : rows.filter(([key]) => key.startsWith(ns)).map(([key, v]) => [key.slice(ns.length), v]);
  return {
    shared: inner.shared,
    get: (kind, key) => inner.get(kind, k(kind, key)),
    set: (kind, key, value, options) => inner.set(kind, k(kind, key), value, opts(kind, options)),
    add: (kind, key, value, now, options) => inner.add(kind, k(kind, key), value, now, opts(kind, options)),
    take: (kind, key, read) => inner.take(kind, k(kind, key), read),
    swap: (kind, key, expected, next, options) => inner.swap(kind, k(kind, key), expected, next, opts(kind, options)),
    delete: (kind, key) => inner.delete(kind, k(kind, key)),
    deleteGroup: (kinds, group) => inner.deleteGroup(kinds, ns + group),
    entries: async <T>(kind: StateKind) => own<T>(kind, await inner.entries<T>(kind)),
    groupEntries: async <T>(kind: StateKind, group: string) => own<T>(kind, await inner.groupEntries<T>(kind, SHARED_KINDS.has(kind) ? group : ns + group)),
    // Pruning, clearing and closing act on the whole store (every issuer).
    clear: (kinds) => inner.clear(kinds),
    prune: (now, limits) => inner.prune(now, limits),
    close: () => inner.close(),
  };
}
