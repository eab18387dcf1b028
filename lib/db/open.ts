/**
 * Opens the SqlStore a Node or Deno command line asks for: an embedded `file:` database (its
 * folder created first), `:memory:`, or a remote libSQL server (`libsql://`, `https://`) with an
 * optional auth token. workerd uses `@libsql/client/web` or a Durable Object instead.
 */
import { createClient } from "@libsql/client";
import type { HostRuntime } from "../runtime.ts";
import { isLibsqlUrl, libsqlStore } from "./libsql.ts";
import type { SqlStore } from "./store.ts";

export async function openSqlStore(runtime: HostRuntime, url: string, authToken?: string): Promise<SqlStore> {
  if (!isLibsqlUrl(url)) throw new Error(`unsupported database URL "${url}": use file:, :memory:, libsql:// or https://`);
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length).split("?")[0]!;
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
    if (dir) await runtime.ensureDir(runtime.resolvePath(dir));
  }
  return libsqlStore(createClient({ url, authToken }));
}
