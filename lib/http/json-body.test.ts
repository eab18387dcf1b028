import { Hono } from "hono";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { apiErrorHandler } from "./errors.ts";
import { readJsonBody } from "./json-body.ts";

const Body = v.object({ name: v.pipe(v.string(), v.minLength(1)), count: v.optional(v.number()) });

function app() {
  const a = new Hono();
  a.onError(apiErrorHandler());
  a.post("/", async (c) => c.json(await readJsonBody(c, Body)));
  return a;
}

const post = (body: string) => app().request("/", { method: "POST", body, headers: { "Content-Type": "application/json" } });

describe("readJsonBody", () => {
  it("returns the decoded body", async () => {
    const res = await post('{"name":"a","count":2}');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: "a", count: 2 });
  });

  it.each([
    ["malformed JSON", "{nope", "request body is not valid JSON"],
    ["an empty body", "", "request body is empty; expected JSON"],
    ["an array", "[1]", "request body must be a JSON object"],
    ["null", "null", "request body must be a JSON object"],
  ])("%s is 400 INVALID_REQUEST", async (_, body, message) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: "INVALID_REQUEST", message } });
  });

  it("an unknown field is 400 INVALID_REQUEST naming it", async () => {
    const res = await post('{"name":"a","extra":1,"other":2}');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { code: "INVALID_REQUEST", message: "unknown fields: extra, other", details: { fields: ["extra", "other"] } },
    });
  });

  it("a missing field is 400 VALIDATION_ERROR with its path", async () => {
    const res = await post("{}");
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; details: { issues: { path: string }[] } } };
    expect(body.error.code).toBe("VALIDATION_ERROR");
    expect(body.error.details.issues.map((i) => i.path)).toEqual(["name"]);
  });

  it("an unknown field inside a nested strict object is 400 INVALID_REQUEST naming its path", async () => {
    const Nested = v.object({ limits: v.optional(v.strictObject({ cpu_ms: v.optional(v.number()) })) });
    const a = new Hono();
    a.onError(apiErrorHandler());
    a.post("/", async (c) => c.json(await readJsonBody(c, Nested)));
    const res = await a.request("/", { method: "POST", body: '{"limits":{"cpu_ms":1,"gpu_ms":2}}', headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { code: "INVALID_REQUEST", message: "unknown field: limits.gpu_ms", details: { fields: ["limits.gpu_ms"] } },
    });
  });

  it("an ill-typed field is 400 VALIDATION_ERROR", async () => {
    const res = await post('{"name":"a","count":"2"}');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("VALIDATION_ERROR");
    expect(body.error.message).toMatch(/^count: /);
  });

  describe("nesting and object-typed fields", () => {
    const Nested = v.object({
      limits: v.optional(v.partial(v.strictObject({ cpu_ms: v.number() }))),
      list: v.optional(v.array(v.object({ a: v.optional(v.number()) }))),
      data: v.optional(v.unknown()),
    });
    const postNested = (body: string) => {
      const a = new Hono();
      a.onError(apiErrorHandler());
      a.post("/", async (c) => c.json(await readJsonBody(c, Nested)));
      return a.request("/", { method: "POST", body, headers: { "Content-Type": "application/json" } });
    };
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

    it("a body nested deeper than 64 is 400 INVALID_REQUEST with max_depth, before it is parsed", async () => {
      for (const depth of [64, 3500, 100_000]) {
        const res = await postNested(`{"data":${nested(depth)}}`);
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({
          error: { code: "INVALID_REQUEST", message: "request body is nested deeper than 64 levels", details: { max_depth: 64 } },
        });
      }
      expect((await postNested(`{"data":${nested(63)}}`)).status).toBe(200);
    });

    it.each([["0", "0"], ["a string", '"x"'], ["null", "null"], ["an empty array", "[]"], ["an array", "[1]"]])(
      "a group that is %s is 400 VALIDATION_ERROR at its path (not an unknown field)",
      async (_, value) => {
        const res = await postNested(`{"limits":${value}}`);
        expect(res.status).toBe(400);
        const body = (await res.json()) as { error: { code: string; details: { issues: { path: string }[] } } };
        expect(body.error.code).toBe("VALIDATION_ERROR");
        expect(body.error.details.issues.map((i) => i.path)).toEqual(["limits"]);
      },
    );

    it("an array item that should be an object is refused at its path", async () => {
      const res = await postNested('{"list":[{"a":1},[],{}]}');
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; details: { issues: { path: string }[] } } };
      expect(body.error.code).toBe("VALIDATION_ERROR");
      expect(body.error.details.issues.map((i) => i.path)).toEqual(["list.1"]);
      expect((await postNested('{"list":[{"a":1},{}],"limits":{}}')).status).toBe(200);
    });
  });
});
