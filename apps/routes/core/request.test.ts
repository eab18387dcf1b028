import { describe, expect, it } from "vitest";
import { maxBodyPieces } from "#lib/http";
import { boundedBody, headerMap, headerMapOfLines, multiMap, readBody, RequestBodyError } from "./request.ts";

/** A streamed (chunked) request body made of `pieces`. */
function streamed(pieces: Uint8Array[], type = "text/plain"): Request {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(p);
      c.close();
    },
  });
  return new Request("http://host.test/x", { method: "POST", body, headers: { "content-type": type }, duplex: "half" } as RequestInit);
}

describe("request bodies", () => {
  it("groups repeated keys into one list in linear time (200,000 repeats)", () => {
    const pairs: [string, string][] = Array.from({ length: 200_000 }, (_, i) => ["a", String(i)]);
    const out = multiMap([["b", "x"], ...pairs]);
    expect(out.b).toBe("x");
    expect(out.a).toHaveLength(200_000);
    expect((out.a as string[])[199_999]).toBe("199999");
  });

  it("reads a streamed body into one buffer, and refuses it past the size or the number of pieces", async () => {
    const read = await readBody(streamed([new TextEncoder().encode("hello "), new TextEncoder().encode("world")]), 1024);
    expect(read.rawBody).toBe("hello world");
    await expect(readBody(streamed([new Uint8Array(600), new Uint8Array(600)]), 1024)).rejects.toMatchObject({ code: "BODY_TOO_LARGE", status: 413 });
    const pieces = Array.from({ length: maxBodyPieces(1024) + 1 }, () => new Uint8Array(0));
    await expect(readBody(streamed(pieces), 1024)).rejects.toThrow(/more than 16384 pieces/);
  });

  it("bounds a body forwarded to a mount: errors past the limit and says so", async () => {
    const bounded = boundedBody(streamed([new Uint8Array(800), new Uint8Array(800)]), 1024);
    await expect(new Response(bounded.body).arrayBuffer()).rejects.toMatchObject({ code: "BODY_TOO_LARGE" });
    expect(bounded.exceeded()).toBe(true);
    const declared = new Request("http://host.test/x", { method: "POST", body: "x".repeat(2000), headers: { "content-length": "2000" } });
    expect(() => boundedBody(declared, 1024)).toThrow(RequestBodyError);
  });
});

describe("headerMapOfLines", () => {
  it("gives what web Headers give: lower-case sorted names, repeats joined, values trimmed, no pseudo-headers", () => {
    const lines = ["Host", "a.test", "X-Tag", " one ", "accept", "*/*", "x-tag", "two", ":path", "/x", "Cookie", "a=1", "cookie", "b=2", "Zeta", "\tz\t"];
    const pairs: [string, string][] = [];
    for (let i = 0; i < lines.length; i += 2) if (!lines[i]!.startsWith(":")) pairs.push([lines[i]!, lines[i + 1]!]);
    const viaHeaders = headerMap(new Headers(pairs));
    const fast = headerMapOfLines(lines);
    expect(fast).toEqual(viaHeaders);
    expect(Object.keys(fast)).toEqual(Object.keys(viaHeaders));
    expect(fast["x-tag"]).toBe("one, two");
  });
});
