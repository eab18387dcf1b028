import { describe, expect, it } from "vitest";
import { compileRoutePlan, normalizePrefix, parsePattern, underPrefix } from "./plan.ts";

describe("route patterns", () => {
  it("parses exact segments, :params and a trailing *", () => {
    expect(parsePattern("/")).toEqual({ path: "/", params: [] });
    expect(parsePattern("/a/:id/b/")).toEqual({ path: "/a/:id/b", params: ["id"] });
    expect(parsePattern("/files/*")).toEqual({ path: "/files/*", params: [] });
  });

  it.each([
    ["a", "must start with"],
    ["/a/*/b", "may only be the last segment"],
    ["/:id/:id", "appears twice"],
    ["/:id{[0-9]+}", "is not a path segment"],
    ["/a b", "is not a path segment"],
    ["/:", "is not a path segment"],
  ])("refuses %s", (pattern, message) => {
    expect(() => parsePattern(pattern)).toThrow(message);
  });
});

describe("route plans", () => {
  const auth = { method: "get", pattern: "/docs/:id", public: false, auth: { required: true }, action: "docs:read" };

  it("compiles a plan and names it", () => {
    const plan = compileRoutePlan({ ...auth, resources: [{ type: "doc", idParam: "id", mustExist: true }], csrf: true, audit: "doc.read" });
    expect(plan).toMatchObject({
      method: "GET",
      name: "GET /docs/:id",
      csrf: true,
      audit: "doc.read",
      resources: [{ type: "doc", idParam: "id", mustExist: true }],
    });
  });

  it.each([
    [{ ...auth, resources: [{ type: "doc", idParam: "docId" }] }, "reads the path parameter :docId, which the pattern does not have"],
    [{ ...auth, resources: [{ type: "doc", tenantParam: "t" }] }, ":t"],
    [{ ...auth, action: undefined }, "needs .allow(action)"],
    [{ ...auth, auth: undefined }, "either .public() or .auth"],
    [{ method: "GET", pattern: "/", public: true, action: "x" }, "a public route declares no"],
    [{ ...auth, resources: [{ type: "doc" }, { type: "doc" }] }, "declared twice"],
    [{ ...auth, extra: 1 }, "invalid route plan"],
    [{ ...auth, method: "GET /" }, "method must be a token"],
  ])("refuses %j", (input, message) => {
    expect(() => compileRoutePlan(input)).toThrow(message);
  });
});

describe("mount prefixes", () => {
  it("normalizes and matches on segment boundaries", () => {
    expect(normalizePrefix("/static/")).toBe("/static");
    expect(normalizePrefix("/")).toBe("/");
    expect(() => normalizePrefix("static")).toThrow();
    expect(() => normalizePrefix("/a/../b")).toThrow();
    expect(underPrefix("/static", "/static")).toBe(true);
    expect(underPrefix("/static/a.css", "/static")).toBe(true);
    expect(underPrefix("/staticfoo", "/static")).toBe(false);
    expect(underPrefix("/anything", "/")).toBe(true);
  });
});
