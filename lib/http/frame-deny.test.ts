import { describe, expect, it } from "vitest";
import { unframeable } from "./frame-deny.ts";

describe("unframeable", () => {
  it("marks HTML pages, keeping a policy's other directives", () => {
    const page = unframeable(new Response("<p>", { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": "script-src 'self'" } }));
    expect(page.headers.get("content-security-policy")).toBe("script-src 'self'; frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
  });

  it("leaves anything else, and an immutable response gets a copy", async () => {
    expect(unframeable(Response.json({})).headers.has("x-frame-options")).toBe(false);
    const immutable = Response.redirect("http://127.0.0.1/");
    expect(unframeable(immutable)).toBe(immutable);
  });
});
