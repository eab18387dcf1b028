/** Sandboxes in process or on a pool of threads, shared by the session service and the route host. Runtime-specific modules are imported by path (#lib/sandbox-host/<file>.ts). */
export * from "./pool.ts";
export * from "./threads.ts";
export * from "./sandbox-side.ts";
export * from "./request-threads.ts";
export * from "./sandbox-set.ts";
export * from "./wire.ts";
