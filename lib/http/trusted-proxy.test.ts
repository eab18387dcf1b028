import { describe, expect, it } from "vitest";
import { clientView, parseTrustedProxy, TrustedProxyError } from "./trusted-proxy.ts";

const req = (url: string, headers: Record<string, string> = {}) => new Request(url, { headers });
const forged = { "cf-connecting-ip": "6.6.6.6", "x-forwarded-for": "6.6.6.6", "x-forwarded-proto": "https" };

describe("parseTrustedProxy", () => {
  it("reads none, cloudflare and addresses; refuses anything else", () => {
    expect(parseTrustedProxy(undefined)).toEqual({ kind: "none" });
    expect(parseTrustedProxy("", "cloudflare")).toEqual({ kind: "cloudflare" });
    expect(parseTrustedProxy("10.0.0.1, [::1], ::ffff:10.0.0.2")).toEqual({ kind: "addresses", addresses: new Set(["10.0.0.1", "::1", "10.0.0.2"]) });
    expect(() => parseTrustedProxy("proxy.example")).toThrow(TrustedProxyError);
  });
});

describe("clientView", () => {
  it("believes no header without a setting: the socket's peer, the URL's scheme", () => {
    expect(clientView(req("http://127.0.0.1/", forged), "127.0.0.1", parseTrustedProxy("none"))).toEqual({ address: "127.0.0.1", https: false });
    expect(clientView(req("https://x.test/"), "10.0.0.9", parseTrustedProxy("none")).https).toBe(true);
  });

  it("believes CF-Connecting-IP under cloudflare", () => {
    expect(clientView(req("https://x.test/", forged), undefined, parseTrustedProxy("cloudflare"))).toEqual({ address: "6.6.6.6", https: true });
  });

  it("takes X-Forwarded-For's rightmost untrusted hop and X-Forwarded-Proto from a listed proxy only", () => {
    const proxy = parseTrustedProxy("10.0.0.1,10.0.0.2");
    const headers = { "x-forwarded-for": "1.1.1.1, 7.7.7.7, 10.0.0.2", "x-forwarded-proto": "https" };
    expect(clientView(req("http://app.test/", headers), "::ffff:10.0.0.1", proxy)).toEqual({ address: "7.7.7.7", https: true });
    expect(clientView(req("http://app.test/", headers), "192.168.1.9", proxy)).toEqual({ address: "192.168.1.9", https: false });
    expect(clientView(req("http://app.test/"), "10.0.0.1", proxy)).toEqual({ address: "10.0.0.1", https: false });
  });

  it("drops the port a proxy writes with a hop: each connection of one client is one client", () => {
    const proxy = parseTrustedProxy("10.0.0.1,10.0.0.2");
    const at = (xff: string) => clientView(req("http://app.test/", { "x-forwarded-for": xff }), "10.0.0.1", proxy).address;
    expect(at("203.0.113.7:5123")).toBe("203.0.113.7");
    expect(at("6.6.6.6, 203.0.113.7:5124, 10.0.0.2:443")).toBe("203.0.113.7");
    expect(at("[2001:db8::1]:5123")).toBe("2001:db8::1");
    expect(at("[2001:db8::1]")).toBe("2001:db8::1");
  });
});
