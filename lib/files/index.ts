/** File trees: the interface, path checks, the host file system and R2 implementations. Runtime-specific modules are imported by path (#lib/files/<file>.ts). */
export * from "./tree.ts";
export * from "./paths.ts";
export * from "./host.ts";
export * from "./r2.ts";
export * from "./roots.ts";
