import { describe, expect, it } from "vitest";
import { BodyLimitError, maxBodyPieces, readBoundedBytes } from "./body-limit.ts";

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
