/**
 * Identity provider: the login page. Extra claims typed there (a JSON object) belong to the
 * session being started: the ID token and userinfo show them, a refresh and a silent login of the
 * same session keep them; a bad value re-shows the page with the reason (400) and starts nothing.
 * The provider's pages (login, device, messages) refuse to be framed.
 */
import { describe, expect, it } from "vitest";
import {
  type AuthRequest,
  authRequest,
  client,
  decodeEntities,
  elementText,
  getAuthorize,
  inputByName,
  redeem,
  sessionCookie,
  useProvider,
} from "./idp-helpers.ts";

const idp = useProvider();

/** POST the login form of `request` with these extra fields (quick_login, extra_claims, ...). */
function submit(request: AuthRequest, fields: Record<string, string>): Promise<Response> {
  const form = new URLSearchParams(request.url.searchParams);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return fetch(request.url.origin + request.url.pathname, {
    method: "POST",
    body: form,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

/** Signs in with extra claims; the tokens, and the session cookie. */
async function signIn(fields: Record<string, string>, scope = "openid email profile offline_access") {
  const request = await authRequest(idp.config, { scope });
  const res = await submit(request, fields);
  const text = await res.text();
  if (res.status !== 302) throw new Error(`login: ${res.status} ${text.slice(0, 300)}`);
  const tokens = await redeem(idp.config, new URL(res.headers.get("location")!), request);
  return { tokens, cookie: sessionCookie(res)! };
}

const CLAIMS = { roles: ["admin", "auditor"], tenant: "acme", department: { name: "R&D", floor: 3 }, beta: true };

describe("extra claims at login", () => {
  it("the login page has an optional JSON field for them", async () => {
    const res = await getAuthorize((await authRequest(idp.config)).url);
    const html = await res.text();
    expect(html).toMatch(/<textarea\b[^>]*\bname="extra_claims"/);
  });

  it("show in the ID token and userinfo, and stay with the session: refresh, silent login", async () => {
    const { tokens, cookie } = await signIn({ login: "alice", extra_claims: JSON.stringify(CLAIMS) });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ ...CLAIMS, email: "alice@example.test" });
    const info = await client.fetchUserInfo(idp.config, tokens.access_token, claims.sub);
    expect(info).toMatchObject(CLAIMS);

    const refreshed = await client.refreshTokenGrant(idp.config, tokens.refresh_token!);
    expect(refreshed.claims()).toMatchObject(CLAIMS);
    expect(await client.fetchUserInfo(idp.config, refreshed.access_token, claims.sub)).toMatchObject(CLAIMS);

    const silent = await authRequest(idp.config, { params: { prompt: "none" } });
    const res = await getAuthorize(silent.url, cookie);
    expect(res.status).toBe(302);
    const again = await redeem(idp.config, new URL(res.headers.get("location")!), silent);
    expect(again.claims()).toMatchObject(CLAIMS);
  });

  it("override the user's own claims, with a quick pick too; a login without them has none", async () => {
    const { tokens } = await signIn({ quick_login: "admin", extra_claims: '{"email": "boss@corp.test", "tenant": "t-1"}' });
    expect(tokens.claims()).toMatchObject({ email: "boss@corp.test", tenant: "t-1", groups: ["admins"] });
    const plain = await signIn({ login: "alice" });
    expect(plain.tokens.claims()).not.toHaveProperty("tenant");
    expect(plain.tokens.claims()?.email).toBe("alice@example.test");
  });

  it.each([
    ["not JSON", "{roles: [admin]}", "not valid JSON"],
    ["a list", '["admin"]', "must be a JSON object"],
    ["a string", '"admin"', "must be a JSON object"],
    ["null", "null", "must be a JSON object"],
    ["sub", '{"sub": "someone-else"}', "cannot set sub"],
    ["iss, aud and exp", '{"iss": "x", "aud": "y", "exp": 1, "roles": []}', "cannot set iss, aud, exp"],
    ["iat and nonce", '{"iat": 1, "nonce": "n"}', "cannot set iat, nonce"],
    ["__proto__", '{"__proto__": {"admin": true}}', "cannot set __proto__"],
    ["too long", JSON.stringify({ blob: "x".repeat(4100) }), "longer than 4096 bytes"],
    ["too deep", `{"a":${"[".repeat(70)}${"]".repeat(70)}}`, "nested deeper than 64"],
  ])("%s: the page again with the reason and the text kept (400); no session, no code", async (_name, text, reason) => {
    const before = await fetch(`${idp.base}/debug`).then((r) => r.json() as Promise<{ counts: { sessions: number; codes: number } }>);
    const res = await submit(await authRequest(idp.config), { login: "alice", extra_claims: text });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(sessionCookie(res)).toBeUndefined();
    const html = await res.text();
    expect(elementText(html, "login-error")).toContain(reason);
    expect(html).toMatch(/<textarea\b[^>]*\bname="extra_claims"[^>]*>/);
    const kept = /<textarea\b[^>]*\bname="extra_claims"[^>]*>([\s\S]*?)<\/textarea>/.exec(html)![1]!;
    expect(decodeEntities(kept)).toBe(text);
    expect(inputByName(html, "login")?.value).toBe("alice");
    const after = await fetch(`${idp.base}/debug`).then((r) => r.json() as Promise<{ counts: { sessions: number; codes: number } }>);
    expect(after.counts).toMatchObject({ sessions: before.counts.sessions, codes: before.counts.codes });
  });

  it("blank text is no claims", async () => {
    const { tokens } = await signIn({ login: "bob", extra_claims: "  \n " });
    expect(tokens.claims()?.email).toBe("bob@example.test");
  });
});

describe("the pages refuse to be framed", () => {
  const framing = (res: Response) => ({ csp: res.headers.get("content-security-policy"), xfo: res.headers.get("x-frame-options") });
  const NOT_FRAMED = { csp: "frame-ancestors 'none'", xfo: "DENY" };

  it("login page, its error answers, the device pages, error and logged-out pages", async () => {
    const request = await authRequest(idp.config);
    const responses: [string, Response][] = [
      ["login page", await getAuthorize(request.url)],
      ["login page again (400)", await submit(request, { login: "" })],
      ["device page", await fetch(`${idp.base}/device`)],
      [
        "device decision",
        await fetch(`${idp.base}/device`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "user_code=ABCD-EFGH&action=approve&login=bob",
        }),
      ],
      ["error page", await fetch(`${idp.base}/authorize?client_id=nobody&redirect_uri=http://x.test/cb`)],
      ["logged-out page", await fetch(`${idp.base}/end-session`)],
    ];
    for (const [name, res] of responses) {
      expect(res.headers.get("content-type"), name).toContain("text/html");
      expect(framing(res), name).toEqual(NOT_FRAMED);
      // The page's URL (a code, a state, a hint) is no business of a site it links or posts to (RFC 9700 §4.2).
      expect(res.headers.get("referrer-policy"), name).toBe("strict-origin");
      await res.arrayBuffer();
    }
  });
});
