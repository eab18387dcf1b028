/**
 * Browser sign-in against our identity provider (in-process), the route host reached at
 * http://127.0.0.1:8080 (its public-spa client's redirect URI) through `host.fetch`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeRuntime } from "#lib/adapters/node";
import { openSqlStore } from "#lib/db/open";
import type { SqlStore } from "#lib/db";
import { type StartedIdp, startIdp } from "../../idp/testing.ts";
import type { RouteHost } from "../host/host.ts";
import { prepareRoutesStore, sqlSignedInStore } from "../store/store.ts";
import { scriptHost } from "../testing.ts";
import { createBearerAuthenticator } from "./bearer.ts";
import { createBrowserSignIn, MAX_RETURN_TO, safeReturnTo, sessionOrBearer, SIGNIN_COOKIE } from "./browser.ts";
import { memorySignedInStore, type SignedInStore } from "./signed-in.ts";

const ORIGIN = "http://127.0.0.1:8080";
const SECRET = "browser-test-secret";
const SCRIPT = `const httpmod = require("httpmod"); const app = httpmod.app();
app.get("/me").auth(httpmod.user().required()).allow("profile:read").handle((ctx, res) => res.json({ id: ctx.actor.id, kind: ctx.actor.kind, email: ctx.actor.claims.email }));
app.get("/session").public().handle((ctx) => ctx.request.session.id);`;

let idp: StartedIdp;
let host: RouteHost;

/** A route host with browser sign-in, its sessions in `store` (default: memory). */
async function signInHost(store?: SignedInStore): Promise<RouteHost> {
  const signIn = createBrowserSignIn({ issuer: idp.issuer, sessionCookie: { secret: SECRET, cookieName: "routes_session", secure: false }, store });
  const h = await scriptHost(SCRIPT, {
    session: { secret: SECRET },
    auth: {
      authenticator: sessionOrBearer(signIn.authenticator, createBearerAuthenticator({ issuer: idp.issuer, audience: "public-spa" })),
      authorizer: { authorize: ({ actor }) => ({ allow: actor !== null }) },
    },
  });
  signIn.register(h);
  return h;
}

beforeAll(async () => {
  idp = await startIdp({ users: [{ login: "carol", password: "pw" }] });
  host = await signInHost();
});
afterAll(async () => {
  await host?.close();
  await idp?.stop();
});

/** A browser's cookies: what Set-Cookie gives, and what Max-Age=0 takes away. */
class Jar {
  readonly cookies = new Map<string, string>();
  take(res: Response): Response {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const name = pair!.slice(0, pair!.indexOf("="));
      if (/max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair!.slice(name.length + 1));
    }
    return res;
  }
  get header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

const visit = async (path: string, jar?: Jar, on: RouteHost = host) => {
  const res = await on.fetch(new Request(ORIGIN + path, { headers: jar && jar.cookies.size > 0 ? { cookie: jar.header } : {} }), { requestId: "r" });
  return jar ? jar.take(res) : res;
};

/** Login at /auth/login, the form at the identity provider, back to /auth/callback. */
async function signInAs(login: string, returnTo = "/me", jar = new Jar(), on: RouteHost = host): Promise<{ jar: Jar; callback: URL; landing: Response }> {
  const start = await visit(`/auth/login?return_to=${encodeURIComponent(returnTo)}`, jar, on);
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback`);
  const form = new URLSearchParams([...authorize.searchParams, ["login", login], ["password", "pw"]]);
  const login_ = await fetch(new URL("/authorize", idp.url), { method: "POST", body: form, redirect: "manual" });
  expect(login_.status).toBe(302);
  const callback = new URL(login_.headers.get("location")!);
  const landing = await visit(callback.pathname + callback.search, jar, on);
  return { jar, callback, landing };
}

describe("browser sign-in", () => {
  it("signs a user in with the code flow and PKCE, keeps the actor with the session, and goes back", async () => {
    const { jar, landing } = await signInAs("carol");
    expect(landing.status).toBe(302);
    expect(landing.headers.get("location")).toBe("/me");
    const me = await visit("/me", jar);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ id: expect.stringMatching(/^user-[A-Za-z0-9_-]{22}$/), kind: "user", email: "carol@example.test" });
    // The pre-login cookie was spent at the callback.
    expect(jar.cookies.has(SIGNIN_COOKIE)).toBe(false);
  });

  it("keeps the pre-login state in a signed cookie on /auth, and stores nothing for it", async () => {
    const start = await visit("/auth/login?return_to=%2Fme");
    const cookies = start.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(new RegExp(`^${SIGNIN_COOKIE}=[^;]+; Max-Age=600; Path=/auth; HttpOnly; SameSite=Lax$`));
  });

  it("refuses a replayed, foreign or forged state", async () => {
    const { jar, callback } = await signInAs("alice");
    const replay = await visit(callback.pathname + callback.search, jar);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("not valid (or was used already)");
    // The same code and state in another browser: refused too.
    expect((await visit(callback.pathname + callback.search)).status).toBe(400);
    expect((await visit("/me")).status).toBe(401);
    // A pre-login cookie the host did not sign (state chosen by an attacker): refused.
    const forged = new Jar();
    forged.cookies.set(
      SIGNIN_COOKIE,
      encodeURIComponent(JSON.stringify({ state: "s", nonce: "n", verifier: "v", returnTo: "/", expires: Date.now() + 60_000 })) + ".c2lnbmF0dXJl",
    );
    expect((await visit("/auth/callback?state=s&code=x", forged)).status).toBe(400);
  });

  it("issues a fresh session id at sign-in: a session planted before sign-in is never signed in", async () => {
    // The attacker gets a session cookie of their own, and plants it in the victim's browser.
    const attacker = new Jar();
    const planted = await (await visit("/session", attacker)).text();
    const victim = new Jar();
    victim.cookies.set("routes_session", attacker.cookies.get("routes_session")!);
    await signInAs("carol", "/me", victim);
    expect(victim.cookies.get("routes_session")).not.toBe(attacker.cookies.get("routes_session"));
    expect(await (await visit("/session", victim)).text()).not.toBe(planted);
    expect((await visit("/me", victim)).status).toBe(200);
    expect((await visit("/me", attacker)).status).toBe(401);
  });

  it("signs out: a fresh session id, the actor forgotten, and the issuer ends its session", async () => {
    const { jar } = await signInAs("carol");
    const before = jar.header;
    const out = await visit("/auth/logout", jar);
    expect(out.status).toBe(302);
    expect(jar.header).not.toBe(before);
    const endSession = new URL(out.headers.get("location")!);
    expect(endSession.pathname).toBe("/end-session");
    expect(endSession.searchParams.get("post_logout_redirect_uri")).toBe(ORIGIN);
    expect(endSession.searchParams.get("id_token_hint")).toMatch(/^ey/);
    expect((await visit("/me", jar)).status).toBe(401);
    // The old cookie, kept by someone, is signed out too.
    const kept = new Jar();
    kept.cookies.set("routes_session", before.split("=").slice(1).join("="));
    expect((await visit("/me", kept)).status).toBe(401);
  });

  it("never signs anyone out for anonymous traffic", async () => {
    // Room for one signed-in session: any write for an anonymous request would push carol out.
    const small = await signInHost(memorySignedInStore({ max: 1 }));
    const { jar } = await signInAs("carol", "/me", new Jar(), small);
    for (let i = 0; i < 50; i++) await visit("/auth/login?return_to=%2F", undefined, small);
    for (let i = 0; i < 50; i++) await visit("/me", new Jar(), small);
    expect((await visit("/me", jar, small)).status).toBe(200);
    await small.close();
  });

  it("keeps signed-in sessions in the database across a restart of the host", async () => {
    const store: SqlStore = await openSqlStore(nodeRuntime(), ":memory:");
    await prepareRoutesStore(store);
    const first = await signInHost(sqlSignedInStore(store));
    const { jar } = await signInAs("carol", "/me", new Jar(), first);
    expect((await visit("/me", jar, first)).status).toBe(200);
    await first.close();
    const second = await signInHost(sqlSignedInStore(store));
    expect((await visit("/me", jar, second)).status).toBe(200);
    // Stored by a hash of the id: the table does not hold the cookie's id.
    const rows = await store.query<{ id_hash: string }>("SELECT id_hash FROM signed_in_sessions");
    expect(rows.length).toBeGreaterThan(0);
    expect(jar.header).not.toContain(rows[0]!.id_hash);
    await visit("/auth/logout", jar, second);
    expect((await visit("/me", jar, second)).status).toBe(401);
    await second.close();
    await store.close();
  });

  it("sends a browser without a session to sign in, and answers programs 401", async () => {
    const page = await host.fetch(new Request(`${ORIGIN}/me?tab=2`, { headers: { accept: "text/html,application/xhtml+xml" } }), { requestId: "r" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/auth/login?return_to=%2Fme%3Ftab%3D2");
    const api = await host.fetch(new Request(`${ORIGIN}/me`, { headers: { accept: "application/json" } }), { requestId: "r" });
    expect(api.status).toBe(401);
  });

  it("goes back only to a path on this host, without control characters", () => {
    expect(safeReturnTo("/notes?x=1#top", ORIGIN)).toBe("/notes?x=1#top");
    expect(safeReturnTo(`${ORIGIN}/notes`, ORIGIN)).toBe("/notes");
    expect(safeReturnTo("/a/../b", ORIGIN)).toBe("/b");
    for (
      const bad of [
        "https://evil.test/",
        "//evil.test",
        "/\\evil.test",
        "/\t/evil.example/x",
        "/\n/evil.example",
        "/x\r\nSet-Cookie: a=b",
        "/.//evil.example/x",
        "http://127.0.0.1:9999/x",
        "javascript:alert(1)",
        "",
        undefined,
      ]
    ) {
      expect(safeReturnTo(bad, ORIGIN), JSON.stringify(bad)).toBe("/");
    }
  });

  it("keeps return_to only while the pre-login cookie fits in a browser (4 KB): a longer one goes home, and sign-in works", async () => {
    // `/` is what the cookie's encoding makes longest (%2F): the longest kept is the worst case.
    const longest = `/a${"/".repeat(MAX_RETURN_TO - 2)}`;
    expect(safeReturnTo(longest, ORIGIN)).toBe(longest);
    const start = await visit(`/auth/login?return_to=${encodeURIComponent(longest)}`);
    const cookie = start.headers.getSetCookie()[0]!.split(";")[0]!;
    expect(cookie.length).toBeGreaterThan(3 * MAX_RETURN_TO);
    expect(cookie.length).toBeLessThanOrEqual(4096);
    expect((await signInAs("carol", longest)).landing.headers.get("location")).toBe(longest);
    // One character more once resolved (here é as %C3%A9), or a page's long query: home instead.
    expect(safeReturnTo(`/${"a".repeat(MAX_RETURN_TO)}`, ORIGIN)).toBe("/");
    expect(safeReturnTo(`/${"é".repeat(171)}`, ORIGIN)).toBe("/");
    const { jar, landing } = await signInAs("carol", `/me?filter=${"a/".repeat(1250)}`);
    expect(landing.headers.get("location")).toBe("/");
    expect((await visit("/me", jar)).status).toBe(200);
  });

  it("sends a return_to with a tab, CR or LF home instead: the callback redirects to /, never off-site or 500", async () => {
    for (const returnTo of ["/\t/evil.example/x", "/\n/evil.example/x", "/\r/evil.example/x"]) {
      const { landing } = await signInAs("carol", returnTo);
      expect(landing.status).toBe(302);
      expect(landing.headers.get("location")).toBe("/");
    }
  });
});
