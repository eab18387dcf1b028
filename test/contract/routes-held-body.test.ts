/**
 * Refusals that need none of the body come while the client still holds its body open, on every
 * runtime (node, deno, workerd): a declared 10 GB `Content-Length` is 413 at once, on a public
 * route, an authenticated one and a mount, and a request no route takes is 404 or 405 without its
 * body being waited for. An order, not a time: the answer arrives before the client lets go.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedIdp } from "../../apps/idp/testing.ts";
import { type RunningService } from "../runtimes/service.ts";
import { heldUpload } from "./held-upload.ts";
import { startRoutesContract } from "./routes-helpers.ts";

let idp: StartedIdp;
let host: RunningService;

beforeAll(async () => {
  ({ idp, host } = await startRoutesContract());
});

afterAll(async () => {
  await host?.stop();
  await idp?.stop();
});

const TEN_GB = 10 * 1024 ** 3;

describe("refusals that need no body, while the client holds a 10 GB body open", () => {
  it.each([
    ["a public route", "/echo/1", 413],
    ["an authenticated route", "/notes", 413],
    ["a mount", "/pidp/token", 413],
    ["a path no route takes", "/no/such/route", 404],
    ["a method the route does not take", "/text", 405],
  ])("%s (%s): %i", async (_what, path, status) => {
    const held = await heldUpload(host.port, path, TEN_GB);
    expect(held.status, held.received.slice(0, 300)).toBe(status);
    expect(held.answeredWhileHeld).toBe(true);
    if (status === 413) expect(held.received).toMatch(/"code":"BODY_TOO_LARGE"/);
  });

  it("answers the same way when the client asks for 100 Continue first", async () => {
    const held = await heldUpload(host.port, "/echo/1", TEN_GB, { expect: "100-continue" });
    expect(held.status).toBe(413);
    expect(held.answeredWhileHeld).toBe(true);
  });

  it("keeps serving afterwards", async () => {
    expect(await (await fetch(`${host.baseUrl}/text`)).text()).toBe("PLAIN!");
  });
});
