import { describe, expect, it } from "vitest";
import { boundedRequestBody } from "./app.ts";

const MiB = 1024 * 1024;

/** A body that yields `chunks` pieces of `size` bytes and counts how many were pulled. */
function countedBody(chunks: number, size: number) {
  const pulled = { bytes: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= chunks * size) return controller.close();
      pulled.bytes += size;
      controller.enqueue(new Uint8Array(size));
    },
  });
  return { body, pulled };
}

describe("boundedRequestBody (the Worker front's buffering)", () => {
  it("refuses a declared length past every operation's limit before reading anything: 413 in the API's words", async () => {
    const { body, pulled } = countedBody(1_000, MiB);
    const request = new Request("http://127.0.0.1/api/v1/templates", {
      method: "POST",
      headers: { "content-length": String(200 * MiB) },
      body,
      duplex: "half",
    } as RequestInit);
    const answer = await boundedRequestBody(request);
    expect(answer).toBeInstanceOf(Response);
    const res = answer as Response;
    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual({
      error: { code: "PAYLOAD_TOO_LARGE", message: `request body is larger than ${8 * MiB} bytes`, details: { limit_bytes: 8 * MiB } },
    });
    expect(pulled.bytes).toBeLessThanOrEqual(MiB);
  });

  it("stops a streamed body at the limit instead of buffering all of it", async () => {
    const { body, pulled } = countedBody(200, MiB);
    const request = new Request("http://127.0.0.1/api/v1/worktree-files", { method: "PUT", body, duplex: "half" } as RequestInit);
    const answer = await boundedRequestBody(request);
    expect((answer as Response).status).toBe(413);
    expect(pulled.bytes).toBeLessThan(12 * MiB);
  });

  it("hands on a body within the limit as its bytes", async () => {
    const answer = await boundedRequestBody(new Request("http://127.0.0.1/api/v1/templates", { method: "POST", body: '{"name":"t"}' }));
    expect(new TextDecoder().decode(answer as Uint8Array)).toBe('{"name":"t"}');
  });
});
