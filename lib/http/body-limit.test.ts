import { describe, expect, it } from "vitest";
import { BodyLimitError, checkDeclaredLength, maxBodyPieces, readBoundedBytes, releaseUnreadBody } from "./body-limit.ts";

/** A body as a runtime receives it (Node's IncomingMessage is an async iterable of chunks). */
async function* chunks(...pieces: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield typeof piece === "string" ? new TextEncoder().encode(piece) : piece;
}

const post = (headers: Record<string, string> = {}) => new Request("http://host.test/x", { method: "POST", headers });
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("readBoundedBytes from the body as received", () => {
  it("joins the pieces in order, one piece as it came", async () => {
    expect(text(await readBoundedBytes(post(), 100, chunks("one")))).toBe("one");
    expect(text(await readBoundedBytes(post(), 100, chunks("a", "bc", "", "def")))).toBe("abcdef");
    expect((await readBoundedBytes(post(), 100, chunks())).byteLength).toBe(0);
  });

  it("refuses a declared length past the limit before reading anything", async () => {
    let pulled = 0;
    async function* counting() {
      pulled++;
      yield new Uint8Array(10);
    }
    await expect(readBoundedBytes(post({ "content-length": "101" }), 100, counting())).rejects.toMatchObject({ code: "BODY_TOO_LARGE" });
    expect(pulled).toBe(0);
  });

  it("stops at the limit of bytes, and of pieces, without reading the rest", async () => {
    let pulled = 0;
    async function* endless() {
      for (;;) {
        pulled++;
        yield new Uint8Array(40);
      }
    }
    await expect(readBoundedBytes(post(), 100, endless())).rejects.toBeInstanceOf(BodyLimitError);
    expect(pulled).toBe(3);
    const pieces = maxBodyPieces(1024 * 1024);
    async function* tiny() {
      for (let i = 0; i <= pieces; i++) yield new Uint8Array(1);
    }
    await expect(readBoundedBytes(post(), 1024 * 1024, tiny())).rejects.toThrow(/more than \d+ pieces/);
  });

  it("reports a body that breaks off as unreadable", async () => {
    async function* broken() {
      yield new Uint8Array(5);
      throw new Error("aborted");
    }
    await expect(readBoundedBytes(post(), 100, broken())).rejects.toMatchObject({ code: "BODY_UNREADABLE" });
  });
});

describe("checkDeclaredLength", () => {
  it("judges a declared length by the header alone; a streamed body (no length, or chunked) is left to be counted", () => {
    expect(checkDeclaredLength(post({ "content-length": "100" }), 100)).toBe(true);
    expect(() => checkDeclaredLength(post({ "content-length": "101" }), 100)).toThrow(expect.objectContaining({ code: "BODY_TOO_LARGE" }));
    expect(checkDeclaredLength(post(), 100)).toBe(false);
    expect(checkDeclaredLength(post({ "content-length": "101", "transfer-encoding": "chunked" }), 100)).toBe(false);
  });

  it("counts rather than trusts a length that is not one plain number (Deno joins a repeated header: NaN was under every limit)", async () => {
    for (const length of ["5000000, 5000000", "+101", "0x65", "1e3", ""]) {
      expect(checkDeclaredLength(post({ "content-length": length }), 100), length).toBe(false);
    }
    const body = new Request("http://host.test/x", { method: "POST", body: "x".repeat(101), headers: { "content-length": "101, 101" } });
    await expect(readBoundedBytes(body, 100)).rejects.toMatchObject({ code: "BODY_TOO_LARGE" });
  });
});

describe("releaseUnreadBody", () => {
  /** A request whose body never ends, and whether it was cancelled. */
  function endless() {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    const request = new Request("http://host.test/x", { method: "POST", body, duplex: "half" } as RequestInit);
    return { request, cancelled: () => cancelled };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  it("cancels the body a refusal left unread, so the runtime answers without waiting for it", async () => {
    const held = endless();
    await releaseUnreadBody(held.request, new Response("no", { status: 413 }));
    await settle();
    expect(held.cancelled()).toBe(true);
  });

  it("reads a body declared small enough to end soon to its end instead (a cancel spoils the connection under wrangler dev)", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => (c.enqueue(new Uint8Array(1024 * 1024 + 1)), c.close()),
      cancel: () => void (cancelled = true),
    });
    const request = new Request(
      "http://host.test/x",
      { method: "POST", body, duplex: "half", headers: { "content-length": String(1024 * 1024 + 1) } } as RequestInit,
    );
    await releaseUnreadBody(request, new Response("no", { status: 413 }));
    expect(cancelled).toBe(false);
    expect(request.bodyUsed || request.body!.locked).toBe(true);
  });

  it("leaves an answer below 400, and a body the app read or handed on, alone", async () => {
    const ok = endless();
    await releaseUnreadBody(ok.request, new Response("ok"));
    const handedOn = endless();
    const reader = handedOn.request.body!.getReader();
    await releaseUnreadBody(handedOn.request, new Response("no", { status: 404 }));
    await settle();
    expect([ok.cancelled(), handedOn.cancelled()]).toEqual([false, false]);
    reader.releaseLock();
  });
});
