import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { clientAddress, isLoopbackAddress } from "./client-address.ts";

describe("isLoopbackAddress", () => {
  it.each(["127.0.0.1", "127.1.2.3", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::FFFF:127.0.0.9"])("%s is loopback", (a) => {
    expect(isLoopbackAddress(a)).toBe(true);
  });
  it.each([undefined, "", "10.0.0.1", "192.168.1.1", "128.0.0.1", "::2", "::ffff:10.0.0.1", "127.0.0.1.evil.com", "localhost"])(
    "%s is not loopback",
    (a) => {
      expect(isLoopbackAddress(a)).toBe(false);
    },
  );
});

describe("clientAddress", () => {
  const app = new Hono();
  app.get("/", (c) => c.text(clientAddress(c) ?? "none"));

  it("prefers the socket address the adapter saw over any header", async () => {
    const res = await app.request("/", { headers: { "CF-Connecting-IP": "10.0.0.1" } }, { clientAddress: "127.0.0.1" });
    expect(await res.text()).toBe("127.0.0.1");
  });

  it("falls back to CF-Connecting-IP (workerd) and to nothing", async () => {
    expect(await (await app.request("/", { headers: { "CF-Connecting-IP": "10.0.0.1" } })).text()).toBe("10.0.0.1");
    expect(await (await app.request("/")).text()).toBe("none");
  });
});
