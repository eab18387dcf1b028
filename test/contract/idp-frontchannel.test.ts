/**
 * OpenID Connect Front-Channel Logout 1.0: a client with a `frontchannel_logout_uri` (IDP_CLIENTS)
 * that got tokens in the browser's session gets an iframe on the provider's logout page, with
 * `iss` and `sid` when it set `frontchannel_logout_session_required`; the page admits exactly
 * those frames (CSP frame-src), is never framed itself, and goes on to the post-logout redirect.
 * (test/browser/idp-frontchannel.browser.test.ts loads the page in Chromium.)
 */
import { describe, expect, it } from "vitest";
import { attributes, authRequest, codeFlow, decodeEntities, getJson, type Idp, redeem, rp, useProvider } from "./idp-helpers.ts";

const POST_LOGOUT = "http://127.0.0.1:3000/";
const FC_URI = "http://127.0.0.1:4555/frontchannel";
const NOSID_URI = "http://localhost:4666/logout?from=idp";
const CLIENTS = [
  {
    client_id: "fc-app",
    redirect_uris: ["http://127.0.0.1:3000/callback"],
    post_logout_redirect_uris: [POST_LOGOUT],
    frontchannel_logout_uri: FC_URI,
    frontchannel_logout_session_required: true,
  },
  {
    client_id: "fc-nosid",
    redirect_uris: ["http://127.0.0.1:3000/callback"],
    frontchannel_logout_uri: NOSID_URI,
  },
];

const idp = useProvider({ IDP_CLIENTS: JSON.stringify(CLIENTS) });

/** The iframes of a page: [data-client-id, src]. */
function frames(html: string): { client: string; src: string }[] {
  return [...html.matchAll(/<iframe\b[^>]*>/gi)].map((m) => {
    const a = attributes(m[0].replace(/^<iframe/i, "<input"));
    return { client: a["data-client-id"]!, src: a.src! };
  });
}

function endSession(base: Idp["issuer"], cookie: string, params: Record<string, string> = {}): Promise<Response> {
  const url = new URL(`${base}/end-session`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return fetch(url, { headers: { cookie }, redirect: "manual" });
}

describe("front-channel logout", () => {
  it("discovery says it is supported, with the session parameters", async () => {
    const { body } = await getJson<Record<string, unknown>>(`${idp.issuer}/.well-known/openid-configuration`);
    expect(body.frontchannel_logout_supported).toBe(true);
    expect(body.frontchannel_logout_session_supported).toBe(true);
  });

  it("the logout page frames the client's URI with iss and sid, then continues to the post-logout redirect", async () => {
    const fc = await rp(idp.issuer, "fc-app");
    const { claims, cookie } = await codeFlow(fc);
    expect(claims.sid).toBeTruthy();
    const res = await endSession(idp.issuer, cookie!, { post_logout_redirect_uri: POST_LOGOUT, client_id: "fc-app", state: "s-1" });
    const html = await res.text();
    expect(res.status).toBe(200);
    const [frame, ...others] = frames(html);
    expect(others).toEqual([]);
    expect(frame!.client).toBe("fc-app");
    const src = new URL(frame!.src);
    expect(src.origin + src.pathname).toBe(FC_URI);
    expect(src.searchParams.get("iss")).toBe(idp.issuer);
    expect(src.searchParams.get("sid")).toBe(claims.sid);
    // Exactly these frames; never framed itself; the session cookie cleared.
    expect(res.headers.get("content-security-policy")).toBe(`frame-ancestors 'none'; frame-src ${FC_URI}`);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.getSetCookie().some((c) => /^idp_session=;/.test(c) && /Max-Age=0/i.test(c))).toBe(true);
    const next = /<a id="continue" href="([^"]*)"/.exec(html)?.[1];
    expect(decodeEntities(next!)).toBe(`${POST_LOGOUT}?state=s-1`);
    // The session is over: a silent request is login_required.
    const silent = await authRequest(fc, { params: { prompt: "none" } });
    const again = await fetch(silent.url, { headers: { cookie: cookie! }, redirect: "manual" });
    expect(new URL(again.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });

  it("every client of the session gets a frame; without session_required the URI is left as registered", async () => {
    const fc = await rp(idp.issuer, "fc-app");
    const nosid = await rp(idp.issuer, "fc-nosid");
    const dev = await rp(idp.issuer, "dev-client");
    const { cookie } = await codeFlow(fc);
    // The same browser session signs in to two more clients silently.
    for (const config of [nosid, dev]) {
      const request = await authRequest(config, { params: { prompt: "none" } });
      const res = await fetch(request.url, { headers: { cookie: cookie! }, redirect: "manual" });
      await redeem(config, new URL(res.headers.get("location")!), request);
    }
    const res = await endSession(idp.issuer, cookie!);
    const html = await res.text();
    expect(res.status).toBe(200);
    const found = frames(html).sort((a, b) => a.client.localeCompare(b.client));
    expect(found.map((f) => f.client)).toEqual(["fc-app", "fc-nosid"]); // dev-client has no URI
    expect(found[1]!.src).toBe(NOSID_URI);
    expect(res.headers.get("content-security-policy")).toMatch(/^frame-ancestors 'none'; frame-src /);
    const sources = res.headers.get("content-security-policy")!.split("frame-src ")[1]!.split(" ").sort();
    expect(sources).toEqual([FC_URI, "http://localhost:4666/logout"].sort());
    expect(html).not.toContain('id="continue"');
    expect(html).toContain('id="logged-out"');
  });

  it("a session without front-channel clients logs out as before (302 to the post-logout URI)", async () => {
    const { cookie } = await codeFlow(idp.config);
    const res = await endSession(idp.issuer, cookie!, { post_logout_redirect_uri: "http://127.0.0.1:3000", state: "x" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("http://127.0.0.1:3000/?state=x");
  });

  it("a dynamically registered client (RFC 7591) with the metadata gets its frame too", async () => {
    const registered = await fetch(`${idp.issuer}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: ["http://127.0.0.1:3000/callback"],
        token_endpoint_auth_method: "none",
        frontchannel_logout_uri: "http://127.0.0.1:4777/fc",
        frontchannel_logout_session_required: true,
      }),
    });
    expect(registered.status).toBe(201);
    const metadata = (await registered.json()) as { client_id: string; frontchannel_logout_uri: string };
    expect(metadata.frontchannel_logout_uri).toBe("http://127.0.0.1:4777/fc");
    const { claims, cookie } = await codeFlow(await rp(idp.issuer, metadata.client_id));
    const res = await endSession(idp.issuer, cookie!);
    const [frame] = frames(await res.text());
    expect(frame!.client).toBe(metadata.client_id);
    expect(new URL(frame!.src).searchParams.get("sid")).toBe(claims.sid);
  });

  it("a registered URI whose host a CSP source cannot name (a;b, a,b, *) gets no frame and cannot reshape the policy", async () => {
    const fc = await rp(idp.issuer, "fc-app");
    const { cookie } = await codeFlow(fc);
    for (const uri of ["https://a;sandbox/fc", "https://a,b/fc", "https://*/fc"]) {
      const registered = await fetch(`${idp.issuer}/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:3000/callback"], token_endpoint_auth_method: "none", frontchannel_logout_uri: uri }),
      });
      const { client_id } = (await registered.json()) as { client_id: string };
      const config = await rp(idp.issuer, client_id);
      const request = await authRequest(config, { params: { prompt: "none" } });
      const res = await fetch(request.url, { headers: { cookie: cookie! }, redirect: "manual" });
      await redeem(config, new URL(res.headers.get("location")!), request);
    }
    const res = await endSession(idp.issuer, cookie!);
    expect(frames(await res.text()).map((f) => f.client)).toEqual(["fc-app"]);
    // Before, `https://a;sandbox` added a directive and `https://a,b` split the header into two
    // policies, blocking the frames of the clients after it.
    expect(res.headers.get("content-security-policy")).toBe(`frame-ancestors 'none'; frame-src ${FC_URI}`);
  });

  it("a client that only had a code (never redeemed) gets no frame", async () => {
    const fc = await rp(idp.issuer, "fc-app");
    const request = await authRequest(fc);
    const form = new URLSearchParams(request.url.searchParams);
    form.set("login", "alice");
    const login = await fetch(request.url.origin + request.url.pathname, {
      method: "POST",
      body: form,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("idp_session="))!;
    const res = await endSession(idp.issuer, cookie);
    expect(frames(await res.text())).toEqual([]);
  });
});
