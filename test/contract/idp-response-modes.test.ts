/**
 * Identity provider: response modes of the authorization endpoint. `query` (the default),
 * `fragment` and `form_post` carry codes and errors (with state and iss) back to the redirect URI
 * in the mode asked for, whether the answer comes at once (a session, prompt=none) or after the
 * login page; any other response_mode is `unsupported_response_mode`, in the query, never ignored.
 */
import { describe, expect, it } from "vitest";
import {
  attributes,
  type AuthRequest,
  authRequest,
  getAuthorize,
  inputByName,
  interactiveLogin,
  postLogin,
  redeem,
  REDIRECT_URI,
  useProvider,
} from "./idp-helpers.ts";

const idp = useProvider();

/** A URL whose query holds what a fragment response carried (as a SPA library reads it). */
function fragmentAsQuery(location: string): URL {
  const url = new URL(location);
  const fields = url.hash.slice(1);
  url.hash = "";
  url.search = fields;
  return url;
}

/** The action and the hidden fields of a form_post page. */
function formPost(html: string): { action: string; method: string; fields: Record<string, string> } {
  const form = /<form\b[^>]*>/i.exec(html);
  if (!form) throw new Error(`no form in ${html.slice(0, 300)}`);
  const attrs = attributes(form[0]);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input\b[^>]*>/gi)) {
    const a = attributes(m[0]);
    if (a.type === "hidden") fields[a.name!] = a.value ?? "";
  }
  return { action: attrs.action ?? "", method: (attrs.method ?? "").toLowerCase(), fields };
}

async function request(mode?: string, params: Record<string, string> = {}): Promise<AuthRequest> {
  return authRequest(idp.config, { params: { ...(mode === undefined ? {} : { response_mode: mode }), ...params } });
}

describe("response_mode=fragment", () => {
  it("after the login page: the code, state and iss in the fragment, nothing in the query; the code redeems", async () => {
    const req = await request("fragment");
    const page = await getAuthorize(req.url);
    const html = await page.text();
    expect(inputByName(html, "response_mode")?.value).toBe("fragment");
    const res = await postLogin(req.url, "alice");
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(location.startsWith(`${REDIRECT_URI}#`)).toBe(true);
    const hash = new URLSearchParams(new URL(location).hash.slice(1));
    expect(hash.get("state")).toBe(req.state);
    expect(hash.get("iss")).toBe(idp.issuer);
    expect(new URL(location).search).toBe("");
    const tokens = await redeem(idp.config, fragmentAsQuery(location), req);
    expect(tokens.claims()?.sub).toBeTruthy();
  });

  it("with a session (no page) and for errors: prompt=none answers in the fragment too", async () => {
    const first = await request("fragment");
    const { cookie } = await interactiveLogin(first.url, "bob");
    const silent = await request("fragment", { prompt: "none" });
    const res = await getAuthorize(silent.url, cookie);
    expect(res.status).toBe(302);
    expect(new URLSearchParams(new URL(res.headers.get("location")!).hash.slice(1)).get("code")).toBeTruthy();

    const none = await request("fragment", { prompt: "none" });
    const refused = await getAuthorize(none.url);
    const location = new URL(refused.headers.get("location")!);
    const hash = new URLSearchParams(location.hash.slice(1));
    expect(hash.get("error")).toBe("login_required");
    expect(hash.get("state")).toBe(none.state);
    expect(hash.get("iss")).toBe(idp.issuer);
    expect(location.search).toBe("");
  });

  it("a validation error after the redirect URI (a bad scope) and a scenario failure go back in the fragment", async () => {
    const badScope = await getAuthorize((await request("fragment", { scope: "email" })).url);
    expect(new URLSearchParams(new URL(badScope.headers.get("location")!).hash.slice(1)).get("error")).toBe("invalid_scope");
    const denied = await postLogin((await request("fragment")).url, "fail-access-denied");
    expect(new URLSearchParams(new URL(denied.headers.get("location")!).hash.slice(1)).get("error")).toBe("access_denied");
  });
});

describe("response_mode=form_post", () => {
  it("after the login page: a page that posts code, state and iss to the redirect URI; openid-client redeems the posted response", async () => {
    const req = await request("form_post");
    const res = await postLogin(req.url, "alice");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("cache-control")).toContain("no-store");
    const html = await res.text();
    const form = formPost(html);
    expect(form).toMatchObject({ action: REDIRECT_URI, method: "post" });
    expect(Object.keys(form.fields).sort()).toEqual(["code", "iss", "state"]);
    expect(form.fields.state).toBe(req.state);
    expect(form.fields.iss).toBe(idp.issuer);
    expect(html).toMatch(/<script>[^<]*\.submit\(\)/);
    expect(res.headers.getSetCookie().some((line) => line.startsWith("idp_session="))).toBe(true);

    // What the browser would post to the client's callback, handed to the RP library as is.
    const posted = new Request(form.action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form.fields),
    });
    const tokens = await redeem(idp.config, posted as unknown as URL, req);
    expect(tokens.claims()?.email).toBe("alice@example.test");
  });

  it("errors are posted too; values are escaped in the page", async () => {
    const req = await request("form_post", { prompt: "none", state: `"><script>alert(1)</script>` });
    const res = await getAuthorize(req.url);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain("<script>alert(1)");
    const form = formPost(html);
    expect(form.fields).toMatchObject({ error: "login_required", state: `"><script>alert(1)</script>`, iss: idp.issuer });
  });
});

describe("response_mode=query and other values", () => {
  it("query (explicit) is the default's behaviour", async () => {
    const req = await request("query");
    const { callback } = await interactiveLogin(req.url, "alice");
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(callback.hash).toBe("");
  });

  it.each(["web_message", "jwt", "query.jwt", "fragment.jwt", "FRAGMENT", "okta_post_message"])(
    "response_mode=%s is refused with unsupported_response_mode, in the query, before any login",
    async (mode) => {
      const req = await request(mode);
      const res = await getAuthorize(req.url);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get("location")!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
      expect(location.searchParams.get("error")).toBe("unsupported_response_mode");
      expect(location.searchParams.get("state")).toBe(req.state);
      expect(location.searchParams.get("iss")).toBe(idp.issuer);
      expect(location.hash).toBe("");
    },
  );

  it("a repeated response_mode is invalid_request, in the query", async () => {
    const req = await request("fragment");
    const url = new URL(req.url);
    url.searchParams.append("response_mode", "form_post");
    const res = await getAuthorize(url);
    const location = new URL(res.headers.get("location")!);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.hash).toBe("");
  });

  it("before the redirect URI is validated, every mode gets the 400 page", async () => {
    for (const mode of ["fragment", "form_post", "nonsense"]) {
      const req = await request(mode, { redirect_uri: "http://evil.test/callback" });
      const res = await getAuthorize(req.url);
      expect(res.status, mode).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      await res.text();
    }
  });
});
