/**
 * What the services print when they start (the banner a newcomer reads): the provider's debug
 * line is its page, and a route host that mounts a provider says it is the script's own, with
 * where its debug page is.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type RunningService, startService } from "../../test/runtimes/service.ts";

const running: RunningService[] = [];
afterAll(() => Promise.all(running.map((s) => s.stop())));

const start = async (...args: Parameters<typeof startService>) => {
  const svc = await startService(...args);
  running.push(svc);
  return svc;
};

/** The banner is printed once the server listens, after the health check may already pass. */
async function bannerLine(svc: RunningService, key: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = svc.output().split("\n").find((l) => l.trimStart().startsWith(`${key} `));
    if (line) return line.trim();
    if (Date.now() > deadline) throw new Error(`no "${key}" line in:\n${svc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("start-up banners", () => {
  it("the identity provider's debug line is the debug page, its login link the built-in client", async () => {
    const idp = await start("idp", { env: { LOG_FORMAT: "text" } }, "node");
    expect(await bannerLine(idp, "debug")).toMatch(/^debug\s+http:\/\/localhost:\d+\/debug\/ui \(loopback only; JSON at http:\/\/localhost:\d+\/debug\)$/);
    // The login link ends on a page that shows the result, not on a client that is not running.
    expect(await bannerLine(idp, "login page")).toMatch(/^login page\s+http:\/\/localhost:\d+\/debug\/client \(/);
  });

  it.each(["node", "deno"] as const)(
    "the route count is the script's routes (not the host's /auth ones), with this runtime's command (%s)",
    async (runtime) => {
      const args = ["--script", "examples/routes/hello/app.js", "--issuer", "http://127.0.0.1:5556", "--db", ":memory:", "--threads", "1"];
      const routes = await start("routes", { args, env: { LOG_FORMAT: "text" } }, runtime);
      const command = runtime === "deno" ? "npx deno task routes routes --script ..." : "npm run routes -- routes --script ...";
      expect((await bannerLine(routes, "routes")).replace(/^routes\s+/, "")).toBe(`2 public, 1 authenticated, 0 mounts, 1 static (${command} lists them)`);
    },
  );

  it("a route host with a mounted provider calls it the script's own and names its debug page", async () => {
    const args = [
      "--script",
      "examples/routes/app.js",
      "--issuer",
      "/idp",
      "--policy-file",
      "examples/routes/policy.yaml",
      "--db",
      ":memory:",
      "--threads",
      "1",
    ];
    const routes = await start("routes", { args, env: { LOG_FORMAT: "text" } }, "node");
    const issuer = `http://127.0.0.1:${routes.port}/idp`;
    expect((await bannerLine(routes, "provider")).replace(/^provider\s+/, "")).toBe(
      `${issuer}: this script's own (not :5556's); who is signed in: ${issuer}/debug/ui`,
    );
  });
});
