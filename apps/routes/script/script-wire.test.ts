/** The route host's wire (script-wire.ts), alone and with its other end, httpmod.js's dispatcher. */
import { describe, expect, it } from "vitest";
import { loadQuickJS } from "#lib/sandbox";
import { decodeStrings, encodeStrings } from "#lib/sandbox-host";
import { HTTPMOD_SOURCE } from "./httpmod-source.ts";
import { loadScriptSandbox } from "./script-sandbox.ts";
import {
  COMPACT_TYPES,
  compactAnswerResponse,
  decodeDispatchCall,
  decodeOutcome,
  DISPATCH_GLOBAL,
  dispatcherResponse,
  type DispatchOutcome,
  encodeDispatchCall,
  encodeOutcome,
  isCompactAnswer,
} from "./script-wire.ts";

/** Bodies that could be mistaken for the wire's own marks. */
const AWKWARD = ["", " ", "\x01", "\x05\x08 plain", "\x00\x1f\x7f", "12 {}", '{"status":500}', "ü€😀\u2028\u2029", "a\r\nb\tc", "\ud800"];

describe("a call", () => {
  it("comes back as the handler and the input it was made of", () => {
    for (const handler of [0, 7, 123_456]) {
      for (const body of AWKWARD) {
        const inputJson = JSON.stringify({ request: { body, headers: { "x-odd": body } }, routeName: `GET /${body}` });
        expect(decodeDispatchCall(encodeDispatchCall(handler, inputJson))).toEqual({ handler, inputJson });
      }
    }
  });

  it("crosses a batch of the thread channel (lib/sandbox-host/wire.ts) unchanged", () => {
    const calls = AWKWARD.map((body, id) => ({ t: "call", id, req: encodeDispatchCall(id, JSON.stringify({ body, raw: `c${id}:3:${body}` })) }));
    const crossed = decodeStrings<(typeof calls)[number]>(encodeStrings(calls)!);
    expect(crossed.map((c) => decodeDispatchCall(c.req))).toEqual(calls.map((c) => decodeDispatchCall(c.req)));
  });

  it.each(["", "{}", " {}", "x {}", "-1 {}", "1.5 {}", "NaN {}"])("is refused when malformed: %j", (call) => {
    expect(() => decodeDispatchCall(call)).toThrow(/malformed dispatch call/);
  });
});

describe("a compact answer", () => {
  const types = ["", "text/plain; charset=utf-8", "text/html; charset=utf-8", "application/json"];

  it("reads each of its eight codes: the content type, and whether the handler read the session", () => {
    for (let code = 1; code <= 8; code++) {
      const type = types[(code - 1) % 4]!;
      for (const body of AWKWARD) {
        const text = String.fromCharCode(code) + body;
        expect(isCompactAnswer(text)).toBe(true);
        const expected = { status: 200, headers: type ? [["content-type", type]] : [], body, ...(code > 4 ? { sessionUsed: true } : {}) };
        expect(compactAnswerResponse(text)).toEqual(expected);
        expect(dispatcherResponse(text, undefined)).toEqual(expected);
        expect(decodeOutcome(encodeOutcome(text))).toEqual({ ok: true, response: expected, console: [] });
      }
    }
  });

  it("is told apart from the dispatcher's JSON and from an outcome's", () => {
    expect(isCompactAnswer('{"status":201}')).toBe(false);
    expect(isCompactAnswer(JSON.stringify({ ok: false }))).toBe(false);
    expect(isCompactAnswer("")).toBe(false);
    expect(isCompactAnswer("\t")).toBe(false);
  });
});

describe("an outcome", () => {
  it("crosses as JSON when JSON keeps all of it, control characters and unicode included", () => {
    const outcomes: DispatchOutcome[] = [
      {
        ok: true,
        response: { status: 201, headers: [["x-\u00e9", "v\u2028"], ["content-type", "text/plain"]], body: "\x01 not compact", sessionUsed: true },
        console: [{ level: "log", text: "ü\x00😀" }],
      },
      { ok: true, response: { status: 204, headers: [], body: null }, console: [] },
      { ok: false, failure: "timeout", message: "ran past \x1b[31m", stack: "at /app.js:1:1\n€", console: [{ level: "error", text: "" }] },
      { ok: false, failure: "broken", message: "gone", console: [] },
    ];
    for (const outcome of outcomes) {
      const sent = encodeOutcome(outcome);
      expect(typeof sent).toBe("string");
      expect(decodeOutcome(sent)).toEqual(outcome);
    }
  });

  it("stays an object when it carries bytes or a value to render (structured clone copies those)", () => {
    const bytes: DispatchOutcome = { ok: true, response: { status: 200, headers: [], body: null, bytes: new Uint8Array([0, 1, 255]) }, console: [] };
    const render: DispatchOutcome = { ok: true, response: { status: 200, headers: [], body: null, render: { value: { a: [1] } } }, console: [] };
    for (const outcome of [bytes, render]) {
      expect(encodeOutcome(outcome)).toBe(outcome);
      expect(decodeOutcome(encodeOutcome(outcome))).toBe(outcome);
    }
  });
});

describe("with httpmod.js's dispatcher at the other end", () => {
  it("is spelled there as here: the dispatcher's global and the compact answers' content types", () => {
    expect(HTTPMOD_SOURCE).toContain(`Object.defineProperty(globalThis, ${JSON.stringify(DISPATCH_GLOBAL)},`);
    const types = /const TYPES = (\[[^\]]*\])\.concat\(/.exec(HTTPMOD_SOURCE)?.[1];
    expect(types && (new Function(`return ${types}`)() as string[])).toEqual([...COMPACT_TYPES]);
  });

  it("gives the same outcome through the wire's text forms as through objects", async () => {
    const bodies = JSON.stringify(AWKWARD);
    const sandbox = await loadScriptSandbox(
      await loadQuickJS(),
      {
        entry: "/app.js",
        files: {
          "/app.js": `const app = require("httpmod").app();
            const bodies = ${bodies};
            app.get("/text").public().handle((ctx) => bodies[ctx.params.i]);
            app.get("/html").public().handle((ctx, res) => res.html(bodies[ctx.params.i]));
            app.get("/json").public().handle((ctx, res) => res.json({ body: bodies[ctx.params.i], session: ctx.request.session }));
            app.get("/send").public().handle((ctx, res) => res.send(bodies[ctx.params.i]));
            app.get("/typed").public().handle((ctx, res) => res.type("text/x-\u00e9").send(bodies[ctx.params.i]));
            app.get("/status").public().handle((ctx, res) => res.status(418).send(bodies[ctx.params.i]));
            app.get("/bytes").public().handle((ctx, res) => res.send(new Uint8Array([0, 1, 2])));
            app.get("/render").public().handle(() => ({ rows: [1, 2] }));
            app.get("/logs").public().handle((ctx) => { console.log(bodies[ctx.params.i]); return "x"; });`,
        },
      },
      { mountables: {}, assets: {}, staticFiles: false, services: {} },
    );
    const handlers = sandbox.registrations.flatMap((r) => (r.kind === "route" ? [r.handler] : []));
    expect(handlers).toHaveLength(9);
    let compact = 0;
    for (const handler of handlers) {
      for (let i = 0; i < AWKWARD.length; i++) {
        const input = JSON.stringify({
          request: {
            method: "GET",
            url: "http://h/",
            path: "/",
            query: {},
            params: { i: String(i) },
            headers: {},
            cookies: {},
            session: { id: AWKWARD[i] },
            ip: "",
            body: null,
            rawBody: "",
          },
          actor: null,
          resources: {},
          routeName: "GET /",
        });
        const { handler: decoded, inputJson } = decodeDispatchCall(encodeDispatchCall(handler, input));
        const text = await sandbox.dispatchText(decoded, inputJson);
        if (typeof text === "string" && isCompactAnswer(text)) compact++;
        const viaWire = decodeOutcome(encodeOutcome(text));
        // What dispatchText leaves an object (bytes) comes back as the object itself.
        const direct = await sandbox.dispatch(handler, input);
        expect(viaWire, `handler ${handler}, body ${JSON.stringify(AWKWARD[i])}`).toEqual(direct);
      }
    }
    // The plain text, html, json and send routes answer compactly; the others do not.
    expect(compact).toBe(4 * AWKWARD.length);
    sandbox.dispose();
  });
});
