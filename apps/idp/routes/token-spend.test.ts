/**
 * Spending a code at /token: the used mark, the code's removal and the tokens go to the store
 * together (one commit on a database), and a spending that fails leaves no token behind.
 */
import Database from "libsql";
import { describe, expect, it } from "vitest";
import { groupCommit, type SqliteConnection, sqliteStore, type SqlStore } from "#lib/db";
import { createLogger } from "#lib/log";
import { createIdp } from "../app.ts";
import { MemoryStateStore } from "../state/memory.ts";
import { sqlStateStore } from "../state/sql.ts";
import type { IdpStateStore } from "../state/store.ts";

const ISSUER = "http://idp.test";
const REDIRECT_URI = "http://127.0.0.1:3000/callback";
const logger = createLogger({ level: "silent" });
const form = { "content-type": "application/x-www-form-urlencoded" };

async function codeOf(app: { request(url: string, init?: RequestInit): Response | Promise<Response> }): Promise<string> {
  const res = await app.request(`${ISSUER}/authorize`, {
    method: "POST",
    headers: form,
    body: `client_id=dev-client&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=openid%20offline_access&state=s&login=alice`,
  });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!).searchParams.get("code")!;
}

const exchange = (code: string) => ({
  method: "POST",
  headers: form,
  body: `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&client_id=dev-client`,
});

describe("spending a code at /token", () => {
  it("commits the used mark, the code's removal and the tokens in one transaction", async () => {
    const transactions: string[][] = [];
    const inner = sqliteStore({ writer: new Database(":memory:") as SqliteConnection });
    const recorded: SqlStore = {
      ...inner,
      batch: (statements) => (transactions.push(statements.map((s) => `${s.sql.split(" ")[0]} ${String(s.args?.[0])}`)), inner.batch(statements)),
    };
    const state = await sqlStateStore(groupCommit(recorded, { schedule: (flush) => void setImmediate(flush) }), { shared: true });
    const { app } = await createIdp({ issuer: ISSUER, state, logger });
    const code = await codeOf(app);
    transactions.length = 0;
    const res = await app.request(`${ISSUER}/token`, exchange(code));
    expect(res.status).toBe(200);
    expect(transactions).toEqual([["INSERT used_code", "DELETE code", "INSERT access_token", "INSERT refresh_token"]]);
  });

  it("a code gone when it is taken (pruned, reset) answers invalid_grant and leaves none of the tokens stored with it", async () => {
    const memory = new MemoryStateStore();
    // The code is read, then vanishes before the take.
    const state: IdpStateStore = Object.assign(Object.create(memory) as IdpStateStore, {
      take: async (
        kind: string,
        key: string,
        read?: unknown,
      ) => (kind === "code" ? (await memory.delete("code", key), undefined) : memory.take(kind as never, key, read)),
    });
    const { app } = await createIdp({ issuer: ISSUER, state, logger });
    const res = await app.request(`${ISSUER}/token`, exchange(await codeOf(app)));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant", error_description: "authorization code is unknown or expired" });
    expect(await memory.entries("access_token")).toEqual([]);
    expect(await memory.entries("refresh_token")).toEqual([]);
  });
});
