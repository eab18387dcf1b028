/**
 * The notes example (examples/routes/app.js) end to end in a real browser, on each runtime: the
 * route host with the identity provider mounted at /idp and the session service at /sessions,
 * served as `npm start` serves it. Sign in on the provider's page, write and edit a note through
 * its CSRF-protected forms, see the audit rows, be refused another user's note (403, audited as
 * denied), reach the session API behind sign-in, sign out.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningService, type RuntimeName, startService } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

const BOUND = ["routes", "idp", "sessions"].map((w) => `test/fixtures/bound-services/${w}.toml`);

/** Where it runs; on workerd once in one Worker (wrangler.toml [env.routes]), once with the
 * provider and the session service as Workers of their own behind service bindings. */
const SETUPS: [string, RuntimeName, string[] | undefined][] = [
  ["node", "node", undefined],
  ["deno", "deno", undefined],
  ["workerd", "workerd", undefined],
  ["workerd with service bindings", "workerd", BOUND],
];

describe.each(SETUPS)("the notes example on %s", (_name, runtime, wranglerConfigs) => {
  let service: RunningService;
  let dir: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "notes-"));
    const args = [
      "--script",
      "examples/routes/app.js",
      "--issuer",
      "/idp",
      "--policy-file",
      "examples/routes/policy.yaml",
      "--db",
      `file:${join(dir, "routes.db")}`,
      "--threads",
      "1",
    ];
    // The mounted provider accepts this port's callback (npm start's :8080 is built in; the
    // command line adds its own, a Worker needs the var). On workerd the script, the policy and
    // the issuer are the Worker's defaults.
    const env = { ROUTES_SESSION_SECRET: "notes-test", IDP_REDIRECT_URIS: "http://127.0.0.1:{port}/auth/callback" };
    service = await startService("routes", { args, env, persistTo: join(dir, "wrangler"), wranglerConfigs }, runtime);
  }, 120_000);
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await service?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A fresh browser (own cookies) signed in as `login` at the mounted provider. */
  async function signedIn(login: string): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${service.baseUrl}/notes`);
    expect(new URL(page.url()).pathname).toBe("/idp/authorize");
    await page.fill('input[name="login"]', login);
    await page.click("#sign-in");
    await page.waitForURL(`${service.baseUrl}/notes`);
    return page;
  }

  test("a user writes and edits a note, another is refused it, an admin sees the denial, and signing out ends it", async () => {
    const base = service.baseUrl;
    const home = await (await fetch(`${base}/`)).text();
    expect(home).toContain("<h1>One origin</h1>");

    const alice = await signedIn("alice");
    expect(await alice.locator("h1").textContent()).toBe("Notes");
    // Signed-in pages are not kept by the browser: Back after signing out cannot show them.
    const notesPage = await alice.reload();
    expect(notesPage!.headers()["cache-control"]).toBe("no-store");
    // People by name, not subject id; no Audit link for someone the policy does not let read it.
    expect(await alice.locator("header .who").textContent()).toMatch(/^alice · /);
    expect(await alice.locator('header a[href="/admin/audit"]').count()).toBe(0);
    await alice.fill('input[name="title"]', "Groceries");
    await alice.fill('textarea[name="text"]', "milk <b>eggs</b>");
    await alice.click("#create");
    await alice.waitForURL(/\/notes\/[0-9a-f-]+$/);
    const noteUrl = alice.url();
    expect(await alice.locator("h1").textContent()).toBe("Groceries");
    // Text is escaped, never markup.
    expect(await alice.locator('textarea[name="text"]').inputValue()).toBe("milk <b>eggs</b>");

    await alice.fill('input[name="title"]', "Groceries for Friday");
    await alice.click("#save");
    await alice.waitForURL(noteUrl);
    expect(await alice.locator("h1").textContent()).toBe("Groceries for Friday");
    const history = await alice.locator("#history tr").allTextContents();
    expect(history.some((row) => row.includes("note.update") && row.includes("completed") && row.includes("alice"))).toBe(true);
    // What changed, not who looked: the edit says what it changed, and reading the page adds no row.
    expect(history.some((row) => row.includes('title "Groceries" → "Groceries for Friday"'))).toBe(true);
    expect(history.filter((row) => row.includes("note.read"))).toEqual([]);
    // Delete sits apart from Save, in a section of its own.
    expect(await alice.locator("h2", { hasText: "Delete" }).count()).toBe(1);
    // Its creation is the oldest row.
    expect(history.at(-1)).toMatch(/note\.create\s*completed\s*alice/);
    if (process.env.SCREENSHOT_DIR) await alice.screenshot({ path: `${process.env.SCREENSHOT_DIR}/notes-note.png`, fullPage: true });

    // Without the page's CSRF token the same form post is refused, and nothing changes.
    const forged = await alice.evaluate(
      async (url) => (await fetch(url, { method: "POST", body: new URLSearchParams({ title: "forged", _csrf: "0".repeat(64) }) })).status,
      noteUrl,
    );
    expect(forged).toBe(403);
    await alice.reload();
    expect(await alice.locator("h1").textContent()).toBe("Groceries for Friday");

    // The session service behind the same origin, through alice's browser session: its API, and
    // its console page, which reaches the API under the mount.
    expect(await alice.evaluate(async () => (await fetch("/sessions/api/v1/health")).json())).toEqual({ status: "ok" });
    await alice.click("text=Session console");
    await alice.waitForURL(`${base}/sessions/`);
    await alice.locator('[data-testid="summary"] >> text=live session').waitFor();
    expect(await alice.locator('main h2:has-text("New session")').count()).toBe(1);
    // A change through the session API is audited; the console's reads are not.
    expect(
      await alice.evaluate(async () =>
        (await fetch("/sessions/api/v1/templates", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "audited" }),
        })).status
      ),
    ).toBe(201);
    await alice.goto(`${base}/notes`);
    expect(await alice.locator("table tr", { hasText: "Groceries for Friday" }).textContent()).toContain("alice");
    await alice.goto(noteUrl);

    // bob is in another workspace: the note is there, the policy refuses it.
    const bob = await signedIn("bob");
    expect(await bob.locator("text=No notes yet.").count()).toBe(1);
    const refused = await bob.goto(noteUrl);
    expect(refused!.status()).toBe(403);
    // A browser gets a page, not the JSON envelope: what happened, a hint, a way back.
    expect(await bob.locator("h1").textContent()).toBe("403 Not allowed");
    expect(await bob.locator("#hint").textContent()).toContain("Sign out, then sign in as another user.");
    expect(await bob.locator("#back").getAttribute("href")).toBe("/");
    if (process.env.SCREENSHOT_DIR) await bob.screenshot({ path: `${process.env.SCREENSHOT_DIR}/notes-refused.png`, fullPage: true });
    const unknown = await bob.goto(`${base}/notes/00000000-0000-4000-8000-000000000000`);
    expect(unknown!.status()).toBe(404);
    expect(await bob.locator("h1").textContent()).toBe("404 Not found");
    // alice's own page now shows bob's denied attempt.
    await alice.reload();
    const rows = await alice.locator("#history tr").allTextContents();
    expect(rows.some((row) => row.includes("note.read") && row.includes("denied (tenant_mismatch)") && row.includes("bob"))).toBe(true);

    // The audit page is for admins: bob is refused, admin sees the denial.
    expect((await bob.goto(`${base}/admin/audit`))!.status()).toBe(403);
    expect(await bob.locator("h1").textContent()).toBe("403 Not allowed");
    const admin = await signedIn("admin");
    expect(await admin.locator('header a[href="/admin/audit"]').count()).toBe(1);
    await admin.goto(`${base}/admin/audit?outcome=denied`);
    const denied = await admin.locator("table tr").allTextContents();
    // bob's refusal on the audit page itself is audited too.
    expect(denied.some((row) => row.includes("audit.read") && row.includes("denied") && row.includes("bob"))).toBe(true);
    expect(denied.some((row) => row.includes("note.read") && row.includes("tenant_mismatch") && row.includes("GET /notes/:id") && row.includes("bob"))).toBe(
      true,
    );
    await admin.goto(`${base}/admin/audit`);
    const all = await admin.locator("#audit tr").allTextContents();
    const sessionRows = all.filter((row) => row.includes("sessions.api"));
    // The POST, allowed then completed; no GET of the console's.
    expect(sessionRows.length, sessionRows.join("\n")).toBe(2);
    for (const row of sessionRows) expect(row).toContain("POST /sessions/*");
    expect(all.some((row) => row.includes("note.update") && row.includes("alice"))).toBe(true);
    if (process.env.SCREENSHOT_DIR) await admin.screenshot({ path: `${process.env.SCREENSHOT_DIR}/notes-audit.png`, fullPage: true });
    // Paging: 50 a page, older ones on the next.
    await bob.evaluate(async (url) => {
      for (let i = 0; i < 50; i++) await fetch(url);
    }, noteUrl);
    await admin.goto(`${base}/admin/audit?outcome=denied`);
    expect(await admin.locator("#audit tr").count()).toBe(51); // a header and 50 rows
    await admin.click("text=older →");
    await admin.waitForURL(`${base}/admin/audit?outcome=denied&page=2`);
    expect(await admin.locator("#audit tr").count()).toBeGreaterThan(1);
    expect(await admin.locator("text=← newer").count()).toBe(1);

    // Signing out ends the session here and at the provider, and comes back to this origin.
    await alice.goto(`${base}/auth/logout`);
    await alice.waitForURL(`${base}/`);
    await alice.goto(`${base}/notes`);
    expect(new URL(alice.url()).pathname).toBe("/idp/authorize");
  });
});
