import { describe, expect, it } from "vitest";
import {
  AllowedHostsError,
  allowsAuthority,
  describeAllowlist,
  hostAllowlist,
  hostNameOf,
  misdirected,
  parseAllowedHosts,
  withAllowedHosts,
} from "./host-allowlist.ts";
import { envelopeMisdirected } from "./host-allowlist.ts";

const defaults = hostAllowlist();

describe("hostNameOf", () => {
  it.each([
    ["LOCALHOST:5556", "localhost"],
    ["localhost.", "localhost"],
    ["127.1", "127.0.0.1"],
    ["2130706433", "127.0.0.1"],
    ["0x7f000001:80", "127.0.0.1"],
    ["[0:0:0:0:0:0:0:1]:1", "[::1]"],
    ["Example.TEST.", "example.test"],
  ])("%s is %s, as a browser reads it", (value, name) => {
    expect(hostNameOf(value)).toBe(name);
  });

  it.each(["", "x@127.0.0.1", "127.0.0.1/evil.example", "127.0.0.1?x", "127.0.0.1#x", "a.example, 127.0.0.1", "127.0.0.1\\x", "[::1", ":80", "a b"])(
    "%j is not one authority",
    (value) => {
      expect(hostNameOf(value)).toBeUndefined();
    },
  );
});

describe("the default allowlist", () => {
  it.each([
    "127.0.0.1:5556",
    "127.9.8.7",
    "127.1",
    "2130706433",
    "0x7f000001",
    "[::1]:3210",
    "[0:0:0:0:0:0:0:1]",
    "localhost",
    "localhost:1",
    "LOCALHOST.",
    "app.localhost:8080",
  ])(
    "allows %s",
    (authority) => {
      expect(allowsAuthority(defaults, authority)).toBe(true);
    },
  );
  it.each([
    "rebind.attacker.example:5556",
    "localhost.attacker.example",
    "127.0.0.1.attacker.example",
    "128.0.0.1",
    "10.0.0.1",
    "[::2]",
    "x@127.0.0.1",
    "",
    "evillocalhost",
    "0.0.0.0",
  ])("refuses %j", (authority) => {
    expect(allowsAuthority(defaults, authority)).toBe(false);
  });
});

describe("configured hosts", () => {
  it("adds the hosts of the issuer and the configured names, with any port and a trailing dot", () => {
    const list = hostAllowlist({ urls: ["https://idp.example.test/realms/dev", "{origin}/idp", "/idp", undefined], hosts: ["dev.box", "192.168.1.5:8080"] });
    for (const a of ["idp.example.test", "IDP.example.test.:443", "dev.box:1", "192.168.1.5"]) expect(allowsAuthority(list, a)).toBe(true);
    expect(allowsAuthority(list, "other.example.test")).toBe(false);
    expect(describeAllowlist(list)).toBe("loopback, localhost, idp.example.test, dev.box, 192.168.1.5");
  });

  it("takes .domain as the domain and its subdomains, and * as no check at all", () => {
    const list = hostAllowlist({ hosts: [".corp.test"] });
    expect(allowsAuthority(list, "corp.test")).toBe(true);
    expect(allowsAuthority(list, "a.b.corp.test:8443")).toBe(true);
    expect(allowsAuthority(list, "evilcorp.test")).toBe(false);
    const open = hostAllowlist({ hosts: ["*"] });
    expect(allowsAuthority(open, "rebind.attacker.example")).toBe(true);
    expect(describeAllowlist(open)).toContain("WARNING");
  });

  it("refuses an entry that names no host", () => {
    expect(() => hostAllowlist({ hosts: ["a@b"] })).toThrow(AllowedHostsError);
    expect(() => hostAllowlist({ hosts: ["."] })).toThrow(/not a host name/);
  });

  it("reads a comma-separated setting", () => {
    expect(parseAllowedHosts(" a.test, ,b.test ")).toEqual(["a.test", "b.test"]);
    expect(parseAllowedHosts(undefined)).toEqual([]);
  });
});

const request = (url: string, headers: Record<string, string> = {}) => {
  const r = new Request(url, { headers });
  // A web Request drops Host; the runtimes keep it. Put it back as they do.
  if (headers.host !== undefined) Object.defineProperty(r, "headers", { value: new Headers(Object.entries(headers)) });
  return r;
};

describe("misdirected", () => {
  it("refuses a rebinding name, an absolute-form target naming another host, an empty or doubled Host", () => {
    expect(misdirected(defaults, request("http://rebind.attacker.example:1/", { host: "rebind.attacker.example:1" }))).toMatch(/not a host/);
    expect(misdirected(defaults, request("http://evil.example/", { host: "127.0.0.1" }))).toMatch(/another host/);
    expect(misdirected(defaults, request("http://127.0.0.1/", { host: "" }))).toMatch(/not one host name/);
    expect(misdirected(defaults, request("http://a.example/", { host: "a.example, 127.0.0.1" }))).toMatch(/not one host name/);
    expect(misdirected(defaults, request("http://127.0.0.1/", { host: "x@127.0.0.1" }))).toMatch(/not one host name/);
  });

  it("reads Host from the raw header lines where the runtime passes them (Node), never the headers", () => {
    const raw = (...lines: string[]) => lines;
    // The headers are never built: a getter that throws proves it.
    const untouched = new Request("http://127.0.0.1:5/");
    Object.defineProperty(untouched, "headers", {
      get: () => {
        throw new Error("headers read");
      },
    });
    expect(misdirected(defaults, untouched, undefined, raw("Host", "127.0.0.1:5", "Accept", "*/*"))).toBeUndefined();
    const rebound = new Request("http://rebind.attacker.example:5/");
    expect(misdirected(defaults, rebound, undefined, raw("HOST", "rebind.attacker.example:5"))).toMatch(/not a host/);
    expect(misdirected(defaults, untouched, undefined, raw("host", "rebind.attacker.example", "Host", "127.0.0.1:5"))).toMatch(/not one host name/);
    expect(misdirected(defaults, untouched, undefined, raw("Accept", "*/*"))).toBeUndefined(); // no Host: by the URL
  });

  it("passes loopback in every spelling, and a request without Host by its URL", () => {
    const seen = new Map<string, true>();
    expect(misdirected(defaults, request("http://127.1:5/", { host: "127.1:5" }), seen)).toBeUndefined();
    expect(misdirected(defaults, request("http://127.0.0.1:5/", { host: "127.0.0.1:5" }), seen)).toBeUndefined();
    expect(misdirected(defaults, request("http://localhost.:5/", { host: "LOCALHOST.:5" }))).toBeUndefined();
    expect(misdirected(defaults, request("http://127.0.0.1:5/"))).toBeUndefined();
    expect(misdirected(defaults, request("http://evil.example/"))).toBeDefined();
    expect([...seen.keys()]).toEqual(["127.0.0.1:5"]); // remembered where the URL was built from it
  });
});

describe("withAllowedHosts", () => {
  const app = () => withAllowedHosts({ fetch: (_r: Request, _env?: { requestId?: string }) => new Response("ok") }, defaults, envelopeMisdirected);

  it("answers 421 in the service's JSON, or a page to a browser", async () => {
    const json = await app().fetch(request("http://rebind.attacker.example/", { host: "rebind.attacker.example" }));
    expect(json.status).toBe(421);
    expect(await json.json()).toMatchObject({ error: { code: "MISDIRECTED_REQUEST" } });
    const page = await app().fetch(request("http://rebind.attacker.example/", { host: "rebind.attacker.example", accept: "text/html" }));
    expect(page.status).toBe(421);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(await page.text()).toContain("Misdirected request");
  });

  it("gives its 421 a request id: the caller's when well formed, else a fresh one, or the one the entry chose", async () => {
    const own = await app().fetch(request("http://rebind.attacker.example/", { host: "rebind.attacker.example", "x-request-id": "caller-0001" }));
    expect(own.headers.get("x-request-id")).toBe("caller-0001");
    const fresh = await app().fetch(request("http://rebind.attacker.example/", { host: "rebind.attacker.example", "x-request-id": "bad\tid" }));
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const chosen = await app().fetch(request("http://rebind.attacker.example/", { host: "rebind.attacker.example" }), { requestId: "entry-0001" });
    expect(chosen.headers.get("x-request-id")).toBe("entry-0001");
  });

  it("hands an allowed request on", async () => {
    expect(await (await app().fetch(request("http://127.0.0.1:9/", { host: "127.0.0.1:9" }))).text()).toBe("ok");
  });
});
