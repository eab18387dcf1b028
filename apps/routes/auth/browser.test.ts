/**
 * Browser sign-in against our identity provider (in-process), the route host reached at
 * http://127.0.0.1:8080 (its public-spa client's redirect URI) through `host.fetch`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIdp, type StartedIdp } from "../../idp/testing.ts";
import type { RouteHost } from "../host.ts";
import { scriptHost } from "../testing.ts";
import { createBearerAuthenticator } from "./bearer.ts";
import { createBrowserSignIn, safeReturnTo, sessionOrBearer } from "./browser.ts";

const ORIGIN = "http://127.0.0.1:8080";
const SCRIPT = `const httpmod = require("httpmod"); const app = httpmod.app();
app.get("/me").auth(httpmod.user().required()).allow("profile:read").handle((ctx, res) => res.json({ id: ctx.actor.id, kind: ctx.actor.kind, email: ctx.actor.claims.email }));`;

let idp: StartedIdp;
let host: RouteHost;

beforeAll(async () => {
  idp = await startIdp({ users: [{ login: "carol", password: "pw" }] });
  const signIn = createBrowserSignIn({ issuer: idp.issuer });
  host = await scriptHost(SCRIPT, {
    auth: {
      authenticator: sessionOrBearer(signIn.authenticator, createBearerAuthenticator({ issuer: idp.issuer, audience: "public-spa" })),
      authorizer: { authorize: ({ actor }) => ({ allow: actor !== null }) },
    },
  });
  signIn.register(host);
});
afterAll(async () => {
  await host?.close();
  await idp?.stop();
});

const visit = (path: string, cookie?: string) => host.fetch(new Request(ORIGIN + path, { headers: cookie ? { cookie } : {} }), { requestId: "r" });

/** Login at /auth/login, the form at the identity provider, back to /auth/callback. */
async function signInAs(login: string, returnTo = "/me"): Promise<{ cookie: string; callback: URL; landing: Response }> {
  const start = await visit(`/auth/login?return_to=${encodeURIComponent(returnTo)}`);
  expect(start.status).toBe(302);
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${ORIGIN}/auth/callback`);
  const form = new URLSearchParams([...authorize.searchParams, ["login", login], ["password", "pw"]]);
  const login_ = await fetch(new URL("/authorize", idp.url), { method: "POST", body: form, redirect: "manual" });
  expect(login_.status).toBe(302);
  const callback = new URL(login_.headers.get("location")!);
  const landing = await visit(callback.pathname + callback.search, cookie);
  return { cookie, callback, landing };
}

describe("browser sign-in", () => {
  it("signs a user in with the code flow and PKCE, keeps the actor with the session, and goes back", async () => {
    const { cookie, landing } = await signInAs("carol");
    expect(landing.status).toBe(302);
    expect(landing.headers.get("location")).toBe("/me");
    const me = await visit("/me", cookie);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ id: expect.stringMatching(/^user-[A-Za-z0-9_-]{22}$/), kind: "user", email: "carol@example.test" });
  });

  it("refuses a replayed or foreign state, and keeps programs on bearer tokens", async () => {
    const { cookie, callback } = await signInAs("alice");
    const replay = await visit(callback.pathname + callback.search, cookie);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("not valid (or was used already)");
    // The same code and state in another browser (another session): refused too.
    const other = await visit(callback.pathname + callback.search);
    expect(other.status).toBe(400);
    expect((await visit("/me")).status).toBe(401);
  });

  it("signs out: the session forgets the actor and the issuer ends its session", async () => {
    const { cookie } = await signInAs("carol");
    const out = await visit("/auth/logout", cookie);
    expect(out.status).toBe(302);
    const endSession = new URL(out.headers.get("location")!);
    expect(endSession.pathname).toBe("/end-session");
    expect(endSession.searchParams.get("post_logout_redirect_uri")).toBe(ORIGIN);
    expect(endSession.searchParams.get("id_token_hint")).toMatch(/^ey/);
    expect((await visit("/me", cookie)).status).toBe(401);
  });

  it("sends a browser without a session to sign in, and answers programs 401", async () => {
    const page = await host.fetch(new Request(`${ORIGIN}/me?tab=2`, { headers: { accept: "text/html,application/xhtml+xml" } }), { requestId: "r" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/auth/login?return_to=%2Fme%3Ftab%3D2");
    const api = await host.fetch(new Request(`${ORIGIN}/me`, { headers: { accept: "application/json" } }), { requestId: "r" });
    expect(api.status).toBe(401);
  });

  it("goes back only to a path on this host", () => {
    expect(safeReturnTo("/notes?x=1")).toBe("/notes?x=1");
    for (const bad of ["https://evil.test/", "//evil.test", "/\\evil.test", "notes", "", undefined]) expect(safeReturnTo(bad)).toBe("/");
  });
});
