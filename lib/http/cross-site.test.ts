import { describe, expect, it } from "vitest";
import { crossSite, isUnsafeMethod } from "./cross-site.ts";

const req = (headers: Record<string, string>) => new Request("http://127.0.0.1:3210/api/v1/templates", { method: "POST", headers });

describe("crossSite", () => {
  it("is what the browser says: another Origin, or Sec-Fetch-Site other than same-origin or none", () => {
    expect(crossSite(req({ origin: "https://evil.example" }))).toBe(true);
    expect(crossSite(req({ "sec-fetch-site": "cross-site" }))).toBe(true);
    expect(crossSite(req({ "sec-fetch-site": "same-site" }))).toBe(true);
    expect(crossSite(req({ origin: "null" }))).toBe(true);
    expect(crossSite(req({ origin: "http://127.0.0.1:3210", "sec-fetch-site": "same-origin" }))).toBe(false);
    expect(crossSite(req({}))).toBe(false);
  });

  it("lets a configured origin through", () => {
    expect(crossSite(req({ origin: "http://localhost:5173", "sec-fetch-site": "cross-site" }), new Set(["http://localhost:5173"]))).toBe(false);
  });

  it("knows the unsafe methods", () => {
    expect(["POST", "PUT", "PATCH", "DELETE"].every(isUnsafeMethod)).toBe(true);
    expect(["GET", "HEAD", "OPTIONS"].some(isUnsafeMethod)).toBe(false);
  });
});
