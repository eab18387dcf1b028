/** Identity provider: RP-initiated logout at /end-session. */
import { describe, expect, it } from "vitest";
import { ALICE_SUB, authRequest, client, codeFlow, debugJson, getAuthorize, rp, sessionSetCookie, useProvider } from "./idp-helpers.ts";

interface SessionRow {
  id_prefix: string;
  login: string;
  sub: string;
  auth_time: string;
  expires_at: string;
}

const idp = useProvider();

const sessions = () => debugJson<SessionRow[]>(idp.base, "/sessions");
const subsWithSessions = async () => new Set((await sessions()).map((s) => s.sub));

function endSession(params: Record<string, string>, cookie?: string) {
  const url = client.buildEndSessionUrl(idp.config, params);
  return fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
}

/** A Set-Cookie that removes idp_session: empty value, Max-Age=0 or an expiry in the past. */
function clearsSessionCookie(res: Response): boolean {
  const line = sessionSetCookie(res);
  if (!line) return false;
  const value = line.split(";")[0]!.slice("idp_session=".length).trim();
  const maxAge = /;\s*max-age=(-?\d+)/i.exec(line);
  const expires = /;\s*expires=([^;]+)/i.exec(line);
  return (
    (maxAge !== null && Number(maxAge[1]) <= 0) ||
    (expires !== null && Date.parse(expires[1]!) < Date.now()) ||
    (value === "" && (maxAge !== null || expires !== null))
  );
}

describe("GET /end-session", () => {
  it("with id_token_hint, a registered post_logout_redirect_uri and state: 302 there with state, every session of the subject gone", async () => {
    const first = await codeFlow(idp.config, { login: "alice" });
    const second = await codeFlow(idp.config, { login: "Alice" }); // another browser, same subject
    const bob = await codeFlow(idp.config, { login: "bob" });
    expect(first.cookie).not.toBe(second.cookie);
    const before = await sessions();
    expect(before.filter((s) => s.sub === ALICE_SUB).length).toBeGreaterThanOrEqual(2);

    // No cookie on this call: the subject comes from the hint alone.
    const res = await endSession({
      id_token_hint: first.tokens.id_token!,
      post_logout_redirect_uri: "http://localhost:3000",
      state: "logout-state-1",
    });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(location.origin).toBe("http://localhost:3000");
    expect(location.searchParams.get("state")).toBe("logout-state-1");
    expect(clearsSessionCookie(res)).toBe(true);

    const subs = await subsWithSessions();
    expect(subs.has(ALICE_SUB)).toBe(false);
    expect(subs.has(bob.claims.sub)).toBe(true);

    // The old browser sessions no longer authenticate silently.
    for (const cookie of [first.cookie, second.cookie]) {
      const request = await authRequest(idp.config, { params: { prompt: "none" } });
      const silent = await getAuthorize(request.url, cookie);
      expect(silent.status).toBe(302);
      expect(new URL(silent.headers.get("location")!).searchParams.get("error")).toBe("login_required");
    }
    // Bob's is untouched.
    const request = await authRequest(idp.config, { params: { prompt: "none" } });
    const silent = await getAuthorize(request.url, bob.cookie);
    expect(new URL(silent.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });

  it("an unregistered post_logout_redirect_uri is 400 with no redirect, and the sessions stay", async () => {
    const { tokens } = await codeFlow(idp.config, { login: "carla" });
    const sub = tokens.claims()!.sub;
    // openid-client's URL carries client_id=dev-client; the raw one carries no client_id at all.
    const withClient = await endSession({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: "http://evil.test/bye" });
    const withoutClient = await fetch(
      `${idp.base}/end-session?` + new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: "http://evil.test/bye" }),
      { redirect: "manual" },
    );
    for (const res of [withClient, withoutClient]) {
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      await res.arrayBuffer();
    }
    expect((await subsWithSessions()).has(sub)).toBe(true);
  });

  it("with client_id the URI is checked against that client only, without it against all clients", async () => {
    const { tokens } = await codeFlow(idp.config, { login: "dora" });
    // http://localhost:8080 is registered for public-spa and web-app, not dev-client.
    const wrongClient = await endSession({
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: "http://localhost:8080",
      client_id: "dev-client",
    });
    expect(wrongClient.status).toBe(400);
    expect(wrongClient.headers.get("location")).toBeNull();
    await wrongClient.arrayBuffer();

    // The hint must have been issued to the client_id sent with it (RP-Initiated Logout §2).
    const spa = await codeFlow(await rp(idp.issuer, "public-spa"), { login: "dora" });
    const rightClient = await endSession({
      id_token_hint: spa.tokens.id_token!,
      post_logout_redirect_uri: "http://localhost:8080",
      client_id: "public-spa",
      state: "s2",
    });
    expect(rightClient.status).toBe(302);
    expect(new URL(rightClient.headers.get("location")!).origin).toBe("http://localhost:8080");

    const { tokens: again } = await codeFlow(idp.config, { login: "dora" });
    const anyClient = await fetch(
      `${idp.base}/end-session?` +
        new URLSearchParams({ id_token_hint: again.id_token!, post_logout_redirect_uri: "http://localhost:8080", state: "s3" }),
      { redirect: "manual" },
    );
    expect(anyClient.status).toBe(302);
    const location = new URL(anyClient.headers.get("location")!);
    expect(location.origin).toBe("http://localhost:8080");
    expect(location.searchParams.get("state")).toBe("s3");
  });

  it("without post_logout_redirect_uri a logged-out HTML page is returned and the cookie cleared", async () => {
    const { tokens, cookie } = await codeFlow(idp.config, { login: "erin" });
    const sub = tokens.claims()!.sub;
    const res = await fetch(`${idp.base}/end-session?` + new URLSearchParams({ id_token_hint: tokens.id_token! }), {
      redirect: "manual",
      headers: { cookie: cookie! },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect((await res.text()).toLowerCase()).toMatch(/logged out|signed out/);
    expect(clearsSessionCookie(res)).toBe(true);
    expect((await subsWithSessions()).has(sub)).toBe(false);
  });

  it("with only the session cookie, that session ends", async () => {
    const { tokens, cookie } = await codeFlow(idp.config, { login: "fred" });
    const sub = tokens.claims()!.sub;
    const res = await fetch(`${idp.base}/end-session`, { redirect: "manual", headers: { cookie: cookie! } });
    expect(res.status).toBe(200);
    expect(clearsSessionCookie(res)).toBe(true);
    await res.arrayBuffer();
    expect((await subsWithSessions()).has(sub)).toBe(false);
  });

  it("with nothing at all it still answers the logged-out page and clears the cookie", async () => {
    const res = await fetch(`${idp.base}/end-session`, { redirect: "manual" });
    expect(res.status).toBe(200);
    expect(clearsSessionCookie(res)).toBe(true);
    await res.arrayBuffer();
  });
});
