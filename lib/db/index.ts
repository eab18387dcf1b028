/** The SQL store interface, migrations, group commit, and the store over a SQLite connection. Runtime-specific modules are imported by path (#lib/db/<file>.ts). */
export * from "./store.ts";
export * from "./migrate.ts";
export * from "./group-commit.ts";
export * from "./sqlite.ts";
