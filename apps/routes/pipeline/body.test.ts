/** The body stage: read within the limit, parsed by content type, refused before anything else. */
import { describe, expect, it } from "vitest";
import type { PipelineRequest } from "../core/services.ts";
import { bodyStage } from "./body.ts";
import { requestStage } from "./request.ts";
import { pipeOf, type Stage, stateOf } from "./state.ts";
import { errorOf, publicDocs, sessions, stageApp } from "./testing.ts";

const plan = publicDocs;
const LIMIT = 256 * 1024;

/** request -> body -> a stub that keeps what it was given. */
function app() {
  const seen: { pipe?: PipelineRequest; bytes?: Uint8Array; calls: number } = { calls: 0 };
  const next: Stage = async (c) => {
    const state = stateOf(c);
    seen.calls++;
    seen.pipe = pipeOf(state);
    seen.bytes = state.bytes;
    return c.text("handled");
  };
  const fetch = stageApp(plan.parsed.path, [requestStage(plan, { sessions }), bodyStage({ maxBodyBytes: LIMIT }), next], {
    env: { clientAddress: "10.0.0.1" },
  });
  return { fetch, seen };
}

const post = (body: BodyInit, type: string, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  body,
  headers: { "content-type": type, ...headers },
});
/** JSON arrays nested `depth` levels: `[[...]]`. */
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("bodyStage", () => {
  it("hands the next stage the parsed JSON body and the request as services see it", async () => {
    const { fetch, seen } = app();
    const res = await fetch("/t/t1/docs/d1?x=1&x=2", post('{"a":[1,2],"b":{"c":null}}', "application/json", { "X-Custom": "v", cookie: "k=v" }));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("handled");
    const pipe = seen.pipe!;
    expect(pipe.route).toBe(plan);
    expect(pipe.requestId).toBe("r1");
    expect(pipe.request.method).toBe("POST");
    expect(pipe.script).toMatchObject({
      method: "POST",
      url: "http://host.test/t/t1/docs/d1?x=1&x=2",
      path: "/t/t1/docs/d1",
      query: { x: ["1", "2"] },
      params: { tenant: "t1", id: "d1" },
      cookies: { k: "v" },
      ip: "10.0.0.1",
      body: { a: [1, 2], b: { c: null } },
      rawBody: '{"a":[1,2],"b":{"c":null}}',
    });
    expect(pipe.script.headers["x-custom"]).toBe("v");
    expect(pipe.script.headers["X-Custom"]).toBeUndefined();
    expect(pipe.script.session).toEqual({ id: expect.any(String), isNew: true, cookieName: "routes_session" });
    expect(new TextDecoder().decode(seen.bytes)).toBe('{"a":[1,2],"b":{"c":null}}');
  });

  it.each(
    [
      ["a form", "application/x-www-form-urlencoded", "a=1&b=2&a=3", { a: ["1", "3"], b: "2" }],
      ["a +json type", "application/vnd.api+json; charset=utf-8", '{"data":1}', { data: 1 }],
      ["text", "text/plain", "just text", "just text"],
      ["no content type", "", "raw words", "raw words"],
      ["an empty JSON body", "application/json", "", null],
    ] as const,
  )("parses %s by its content type", async (_what, type, body, parsed) => {
    const { fetch, seen } = app();
    const res = await fetch("/t/t1/docs/d1", { method: "PUT", body, headers: type ? { "content-type": type } : {} });
    expect(res.status).toBe(200);
    expect(seen.pipe!.script.body).toEqual(parsed);
    expect(seen.pipe!.script.rawBody).toBe(body);
  });

  it("gives a GET no body and no bytes", async () => {
    const { fetch, seen } = app();
    expect((await fetch("/t/t1/docs/d1")).status).toBe(200);
    expect(seen.pipe!.script.body).toBeNull();
    expect(seen.pipe!.script.rawBody).toBe("");
    expect(seen.bytes).toBeUndefined();
  });

  it("parses a multipart form's fields and files", async () => {
    const form = new FormData();
    form.append("title", "hello");
    form.append("file", new File(["file text"], "a.txt", { type: "text/plain" }));
    const { fetch, seen } = app();
    expect((await fetch("/t/t1/docs/d1", { method: "POST", body: form })).status).toBe(200);
    expect(seen.pipe!.script.body).toEqual({ title: "hello", file: { name: "a.txt", type: "text/plain", size: 9, encoding: "utf8", content: "file text" } });
  });

  it("refuses bad JSON with 400 INVALID_JSON before the next stage runs", async () => {
    const { fetch, seen } = app();
    const res = await fetch("/t/t1/docs/d1", post("{nope", "application/json"));
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe("INVALID_JSON");
    expect(error.message).toMatch(/^the request body is not valid JSON: /);
    expect(res.headers.get("connection")).toBeNull();
    expect(seen.calls).toBe(0);
  });

  it("refuses a multipart body that does not parse with 400 INVALID_FORM", async () => {
    const { fetch, seen } = app();
    const res = await fetch("/t/t1/docs/d1", post("not multipart at all", "multipart/form-data; boundary=xyz"));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("INVALID_FORM");
    expect(seen.calls).toBe(0);
  });

  it("refuses JSON nested deeper than 64 levels with 400 JSON_TOO_DEEP, and takes 64", async () => {
    const deep = app();
    const res = await deep.fetch("/t/t1/docs/d1", post(nested(65), "application/json"));
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toEqual({ code: "JSON_TOO_DEEP", message: "the request body is JSON nested deeper than 64 levels" });
    expect(deep.seen.calls).toBe(0);

    // Far deeper than a parser's stack (the check counts brackets without parsing).
    const deeper = app();
    const huge = await deeper.fetch("/t/t1/docs/d1", post(nested(100_000), "application/json"));
    expect(huge.status).toBe(400);
    expect((await errorOf(huge)).code).toBe("JSON_TOO_DEEP");

    const ok = app();
    expect((await ok.fetch("/t/t1/docs/d1", post(nested(64), "application/json"))).status).toBe(200);
    expect(JSON.stringify(ok.seen.pipe!.script.body)).toBe(nested(64));
  });

  it("does not count brackets inside JSON strings as depth", async () => {
    const { fetch, seen } = app();
    const text = JSON.stringify({ note: "[".repeat(200) });
    expect((await fetch("/t/t1/docs/d1", post(text, "application/json"))).status).toBe(200);
    expect(seen.pipe!.script.body).toEqual({ note: "[".repeat(200) });
  });

  it("answers a 300 KB body with a 256 KB limit 413 BODY_TOO_LARGE and Connection: close, before the handler runs", async () => {
    const big = "x".repeat(300 * 1024);
    // Counted while it streams (no Content-Length on the request).
    const streamed = app();
    const res = await streamed.fetch("/t/t1/docs/d1", post(big, "text/plain"));
    expect(res.status).toBe(413);
    expect(await errorOf(res)).toEqual({ code: "BODY_TOO_LARGE", message: `the request body is larger than ${LIMIT} bytes` });
    expect(res.headers.get("connection")).toBe("close");
    expect(streamed.seen.calls).toBe(0);

    // Refused on its declared length.
    const declared = app();
    const byLength = await declared.fetch("/t/t1/docs/d1", post(big, "text/plain", { "content-length": String(big.length) }));
    expect(byLength.status).toBe(413);
    expect(byLength.headers.get("connection")).toBe("close");
    expect(declared.seen.calls).toBe(0);
  });

  it("takes a body of exactly the limit, and refuses one byte more", async () => {
    const exact = app();
    expect((await exact.fetch("/t/t1/docs/d1", post("y".repeat(LIMIT), "text/plain"))).status).toBe(200);
    expect(exact.seen.bytes!.byteLength).toBe(LIMIT);
    const over = app();
    expect((await over.fetch("/t/t1/docs/d1", post("y".repeat(LIMIT + 1), "text/plain"))).status).toBe(413);
    expect(over.seen.calls).toBe(0);
  });

  it("stops reading a streamed body at the limit rather than reading the rest", async () => {
    const chunk = new Uint8Array(16 * 1024).fill(120);
    const total = 256; // 4 MiB offered
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled === total) return controller.close();
        pulled++;
        controller.enqueue(chunk);
      },
    });
    const { fetch, seen } = app();
    const res = await fetch("/t/t1/docs/d1", { method: "POST", body, headers: { "content-type": "text/plain" }, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(seen.calls).toBe(0);
    // 17 chunks cross 256 KiB; a little read-ahead is fine, reading on to the end is not.
    expect(pulled).toBeGreaterThanOrEqual(17);
    expect(pulled).toBeLessThan(32);
  });
});
