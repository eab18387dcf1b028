/**
 * What a web page can do to the local daemons (docs/security.md, "The local daemons"), on every
 * runtime. DNS rebinding: a page on `rebind.attacker.example`, re-pointed at 127.0.0.1, talks to a
 * daemon as its own origin; the one thing it cannot hide is the Host header, so every service
 * answers 421 to a name it does not know, the route host's mounts included. The requests are
 * written by hand on a socket: fetch() does not let a test choose Host, send it twice, or ask for
 * an absolute-form target. Then: cross-site writes to the session API and the IdP's debug
 * interface, framing headers on the services' own pages, and Secure cookies.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentRuntime, type RunningService, startService } from "../runtimes/service.ts";

const runtime = currentRuntime();
const REBIND = "rebind.attacker.example";
const EVIL = { origin: "https://evil.example", "sec-fetch-site": "cross-site" };

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request written as is (`head`: request line and headers, without the blank line). */
function raw(port: number, head: string, body = ""): Promise<Raw> {
  return new Promise((resolve, reject) => {
    // Written, not ended: a half-closed connection may be dropped before the answer (Deno).
    const socket = connect(port, "127.0.0.1", () => socket.write(`${head}\r\n\r\n${body}`));
    let data = Buffer.alloc(0);
    const done = () => {
      const text = data.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(":");
        const name = line.slice(0, i).toLowerCase();
        headers[name] = headers[name] === undefined ? line.slice(i + 1).trim() : `${headers[name]}, ${line.slice(i + 1).trim()}`;
      }
      let rest = text.slice(end + 4);
      // wrangler dev keeps the connection open after `Connection: close`: read by the framing.
      if (headers["content-length"] !== undefined) {
        if (Buffer.byteLength(rest, "latin1") < Number(headers["content-length"])) return false;
      } else if (headers["transfer-encoding"]?.includes("chunked")) {
        if (!rest.endsWith("0\r\n\r\n")) return false;
        let out = "";
        while (rest.length > 0) {
          const eol = rest.indexOf("\r\n");
          const size = parseInt(rest.slice(0, eol), 16);
          if (!size) break;
          out += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 4 + size);
        }
        rest = out;
      } else return false;
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body: Buffer.from(rest, "latin1").toString("utf8") });
      socket.destroy();
      return true;
    };
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      done();
    });
    socket.on("end", () => done() || resolve({ status: Number(data.toString("latin1").split(" ")[1]) || 0, headers: {}, body: "" }));
    socket.on("error", reject);
  });
}

const get = (port: number, path: string, host: string | null, extra = "") =>
  raw(port, `GET ${path} HTTP/1.1${host === null ? "" : `\r\nHost: ${host}`}\r\nConnection: close${extra}`);

/** Refused before the service: 421 from ours, or the runtime's own 400 (Deno: two Host headers;
 * wrangler dev: an empty Host) or wrangler dev's 500 (two Host headers, userinfo, an absolute-form
 * target: its proxy cannot forward them). Never the service's answer. */
const REFUSED = runtime === "workerd" ? [400, 421, 500] : [400, 421];

/** The Host spellings a browser (or curl) may send for the loopback, and names a page may not use. */
function hostCases(port: number) {
  return {
    allowed: [
      `127.0.0.1:${port}`,
      `LOCALHOST:${port}`,
      `localhost.:${port}`,
      `127.1:${port}`,
      `2130706433:${port}`,
      `0x7f000001:${port}`,
      `[::1]:${port}`,
      `localhost:1`,
      `app.localhost:${port}`,
    ],
    refused: [
      `${REBIND}:${port}`,
      `${REBIND}`,
      `localhost.${REBIND}:${port}`,
      `127.0.0.1.${REBIND}:${port}`,
      `x@127.0.0.1:${port}`,
      "",
      `xn--localhost:${port}`,
    ],
  };
}

/** Every encoding gets the right answer at `path`; `ok` is the service's own status there. */
async function checkEncodings(port: number, path: string, ok: number): Promise<void> {
  const { allowed, refused } = hostCases(port);
  for (const host of allowed) expect((await get(port, path, host)).status, host).toBe(ok);
  // IPv6 loopback written out: ours allows it (it is [::1]); @hono/node-server refuses a Host its
  // URL would rewrite with 400 before the app sees it. Browsers send [::1].
  expect((await get(port, path, `[0:0:0:0:0:0:0:1]:${port}`)).status).toBe(runtime === "node" ? 400 : ok);
  for (const host of refused) expect(REFUSED, `Host: ${host}`).toContain((await get(port, path, host)).status);
  const twice = await raw(port, `GET ${path} HTTP/1.1\r\nHost: ${REBIND}\r\nHost: 127.0.0.1:${port}\r\nConnection: close`);
  expect(REFUSED, "two Host headers").toContain(twice.status);
  const absolute = await raw(port, `GET http://evil.example${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close`);
  expect(REFUSED, "absolute-form target").toContain(absolute.status);
}

/** alice's sign-in at the provider's login form (dev-client, a loopback callback). */
function signIn(idp: RunningService, extra: Record<string, string> = {}): Promise<Response> {
  const params = new URLSearchParams({
    client_id: "dev-client",
    redirect_uri: "http://127.0.0.1:3000/callback",
    response_type: "code",
    scope: "openid",
    state: "s1",
    login: "alice",
    ...extra,
  });
  const form = { "content-type": "application/x-www-form-urlencoded" };
  return fetch(`${idp.baseUrl}/authorize`, { method: "POST", headers: form, body: params, redirect: "manual" });
}

describe("identity provider", () => {
  let idp: RunningService;
  beforeAll(async () => {
    idp = await startService("idp", { env: { IDP_ALLOWED_HOSTS: "dev.box,.corp.test" } });
  });
  afterAll(() => idp?.stop());

  it("refuses a rebinding Host with 421, OAuth JSON for a program and a page for a browser", async () => {
    const json = await get(idp.port, "/healthz", `${REBIND}:${idp.port}`);
    expect(json.status).toBe(421);
    expect(JSON.parse(json.body)).toMatchObject({ error: "invalid_request", error_description: expect.stringContaining(REBIND) });
    // Answered before the request id middleware, it still carries an id, as every response does.
    expect(json.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const page = await get(idp.port, "/debug/ui", `${REBIND}:${idp.port}`, "\r\nAccept: text/html");
    expect(page.status).toBe(421);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.body).not.toContain("debug");
  });

  it("answers every loopback spelling and refuses the others", async () => {
    await checkEncodings(idp.port, "/healthz", 200);
  });

  it("answers the names --allowed-hosts adds (IDP_ALLOWED_HOSTS)", async () => {
    for (const host of ["dev.box", `DEV.BOX.:${idp.port}`, "corp.test", `a.b.corp.test:${idp.port}`]) {
      expect((await get(idp.port, "/healthz", host)).status, host).toBe(200);
    }
    expect((await get(idp.port, "/healthz", "evilcorp.test")).status).toBe(421);
  });

  it("a rebinding page's POST to the debug interface changes nothing", async () => {
    const before = (await (await fetch(`${idp.baseUrl}/debug/clock`)).json()) as Record<string, unknown>;
    const body = '{"advance_seconds":86400}';
    const res = await raw(
      idp.port,
      `POST /debug/clock HTTP/1.1\r\nHost: ${REBIND}:${idp.port}\r\nOrigin: http://${REBIND}:${idp.port}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close`,
      body,
    );
    expect(res.status).toBe(421);
    const cross = await fetch(`${idp.baseUrl}/debug/clock`, { method: "POST", headers: { ...EVIL, "content-type": "text/plain" }, body });
    expect(cross.status).toBe(403);
    expect(await (await fetch(`${idp.baseUrl}/debug/clock`)).json()).toEqual(before);
  });

  it("every page of its own refuses to be framed: the debug UI and client too", async () => {
    for (const path of ["/debug/ui", "/debug/client", "/debug/client/callback?state=x&code=y"]) {
      const res = await fetch(`${idp.baseUrl}${path}`, { redirect: "manual" });
      if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) continue; // a redirect to /authorize
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'");
      await res.arrayBuffer();
    }
    const ui = await fetch(`${idp.baseUrl}/debug/ui`);
    expect(ui.headers.get("x-frame-options")).toBe("DENY");
    await ui.arrayBuffer();
  });

  it("a form_post page may be framed by the client's own origin only", async () => {
    const res = await signIn(idp, { response_mode: "form_post" });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("http://127.0.0.1:3000/callback");
    expect(res.headers.get("content-security-policy")).toBe("frame-ancestors http://127.0.0.1:3000");
  });
});

describe("identity provider with --allowed-hosts *", () => {
  let idp: RunningService;
  beforeAll(async () => {
    idp = await startService("idp", { env: { IDP_ALLOWED_HOSTS: "*", LOG_FORMAT: "text" } });
  });
  afterAll(() => idp?.stop());

  it("answers any Host, and says so in its banner", async () => {
    expect((await get(idp.port, "/healthz", `${REBIND}:${idp.port}`)).status).toBe(200);
    if (runtime !== "workerd") expect(idp.output()).toContain("WARNING, a web page can reach this service by DNS rebinding");
  });
});

describe.skipIf(runtime === "workerd")("session service with --allowed-hosts * and JSON logs (no banner)", () => {
  let sessions: RunningService;
  beforeAll(async () => {
    sessions = await startService("sessions", { args: ["--db", ":memory:", "--allowed-hosts", "*"] });
  });
  afterAll(() => sessions?.stop());

  it("warns in its log that the Host check is off", () => {
    const warning = sessions.output().split("\n").find((line) => line.includes("the Host check is off"));
    expect(warning, sessions.output()).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: "warn" });
  });
});

describe("identity provider with an https issuer", () => {
  let idp: RunningService;
  beforeAll(async () => {
    idp = await startService("idp", { env: { IDP_ISSUER: "https://idp.dev.test" } });
  });
  afterAll(() => idp?.stop());

  it("sets its session cookie Secure, and answers the issuer's host", async () => {
    const res = await signIn(idp);
    expect(res.status).toBe(302);
    expect(res.headers.getSetCookie().find((c) => c.startsWith("idp_session="))).toMatch(/; Secure/);
    expect((await get(idp.port, "/healthz", "idp.dev.test")).status).toBe(200);
  });
});

describe("session service", () => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService("sessions", { args: ["--db", ":memory:"], env: { SESSIONS_ALLOWED_HOSTS: "dev.box" } });
  });
  afterAll(() => svc?.stop());

  const templates = async () => ((await (await fetch(`${svc.baseUrl}/api/v1/templates`)).json()) as { items?: unknown[] }).items?.length;

  it("refuses a rebinding Host with 421 in its error envelope; answers loopback spellings and --allowed-hosts", async () => {
    const res = await get(svc.port, "/api/v1/health", `${REBIND}:${svc.port}`);
    expect(res.status).toBe(421);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "MISDIRECTED_REQUEST" } });
    await checkEncodings(svc.port, "/api/v1/health", 200);
    expect((await get(svc.port, "/api/v1/health", `dev.box:${svc.port}`)).status).toBe(200);
  });

  it("a rebinding page cannot create a template", async () => {
    const count = await templates();
    const body = JSON.stringify({ name: "rebound" });
    const res = await raw(
      svc.port,
      `POST /api/v1/templates HTTP/1.1\r\nHost: ${REBIND}:${svc.port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close`,
      body,
    );
    expect(res.status).toBe(421);
    expect(await templates()).toBe(count);
  });

  it("refuses a write another site's page started with 403, and stores nothing", async () => {
    const count = await templates();
    const variants: Record<string, string>[] = [EVIL, { origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }, { origin: "null" }];
    for (const headers of variants) {
      const res = await fetch(`${svc.baseUrl}/api/v1/templates`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ name: `cross-${Object.keys(headers).join("-")}` }),
      });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(await res.json()).toMatchObject({ error: { code: "CROSS_SITE_REQUEST" } });
    }
    expect(await templates()).toBe(count);
    const del = await fetch(`${svc.baseUrl}/api/v1/templates/00000000-0000-4000-8000-000000000000`, { method: "DELETE", headers: EVIL });
    expect(del.status).toBe(403);
  });

  it("takes writes from its own page and from programs that say nothing", async () => {
    const own = await fetch(`${svc.baseUrl}/api/v1/templates`, {
      method: "POST",
      headers: { origin: new URL(svc.baseUrl).origin, "sec-fetch-site": "same-origin", "content-type": "application/json" },
      body: JSON.stringify({ name: "own-page" }),
    });
    expect(own.status).toBe(201);
    const program = await fetch(`${svc.baseUrl}/api/v1/templates`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"program"}',
    });
    expect(program.status).toBe(201);
  });

  it("its web UI refuses to be framed", async () => {
    const res = await fetch(`${svc.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    await res.arrayBuffer();
  });
});

describe("route host with the notes example (the provider and the session service mounted)", () => {
  let host: RunningService;
  const trusted = runtime !== "workerd"; // workerd has no socket peer: X-Forwarded-* never count there
  beforeAll(async () => {
    host = await startService("routes", {
      args: ["--script", "examples/routes/app.js", "--issuer", "/idp", "--policy-file", "examples/routes/policy.yaml", "--threads", "1"],
      env: { ROUTES_SESSION_SECRET: "local-daemons", IDP_REDIRECT_URIS: "http://127.0.0.1:{port}/auth/callback", ROUTES_TRUSTED_PROXY: "127.0.0.1,::1" },
    });
  }, 120_000);
  afterAll(() => host?.stop());

  it("refuses a rebinding Host with 421 at its own routes and at every mount", async () => {
    for (const path of ["/", "/idp/healthz", "/idp/debug/ui", "/sessions/api/v1/health", "/sessions/"]) {
      const res = await get(host.port, path, `${REBIND}:${host.port}`);
      expect(res.status, path).toBe(421);
      expect(JSON.parse(res.body), path).toMatchObject({ error: { code: "MISDIRECTED_REQUEST" } });
    }
    expect((await get(host.port, "/idp/healthz", `localhost:${host.port}`)).status).toBe(200);
    await checkEncodings(host.port, "/idp/healthz", 200);
  });

  it("its own pages refuse to be framed; a script's page is as the script made it", async () => {
    const page = await fetch(`${host.baseUrl}/no-such-page`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(404);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("content-security-policy")).toBe("frame-ancestors 'none'");
    await page.arrayBuffer();
    const script = await fetch(`${host.baseUrl}/`, { headers: { accept: "text/html" } });
    expect(script.status).toBe(200);
    expect(script.headers.get("x-frame-options")).toBeNull();
    await script.arrayBuffer();
    const ui = await fetch(`${host.baseUrl}/idp/debug/ui`);
    expect(ui.headers.get("x-frame-options")).toBe("DENY");
    await ui.arrayBuffer();
  });

  it.skipIf(!trusted)("sets its cookies Secure when its trusted proxy says the client used https, and only then", async () => {
    const plain = await fetch(`${host.baseUrl}/auth/login`, { redirect: "manual", headers: { "x-forwarded-proto": "http" } });
    expect(plain.status).toBe(302);
    expect(plain.headers.getSetCookie().join("\n")).not.toMatch(/Secure/);
    const https = await fetch(`${host.baseUrl}/auth/login`, { redirect: "manual", headers: { "x-forwarded-proto": "https" } });
    expect(https.status).toBe(302);
    expect(https.headers.getSetCookie().length).toBeGreaterThan(0);
    for (const cookie of https.headers.getSetCookie()) expect(cookie).toMatch(/; Secure/);
    expect(new URL(https.headers.get("location")!).searchParams.get("redirect_uri")).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/auth\/callback$/);
  });
});
