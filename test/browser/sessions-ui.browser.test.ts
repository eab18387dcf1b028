/**
 * The session service's web UI in headless Chromium, on each runtime (on workerd served as the
 * Worker's static assets): create a template and set its limits, create a session, run `1 + 1`,
 * run an infinite loop and see the timeout, run another input in the same session, watch a long
 * execution's console lines arrive before it ends, and find it in the executions list.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningService, type RuntimeName, startService } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
/** Answers every request after 250 ms: an execution that awaits it yields between its lines
 * (on workerd a sandbox that never yields cannot send anything before it ends). */
let slow: Server;
let slowHost: string;
beforeAll(async () => {
  browser = await launchChromium();
  slow = createServer((_req, res) => void setTimeout(() => res.end("ok"), 250));
  await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
  slowHost = `127.0.0.1:${(slow.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => slow?.close(r));
});

const RUNTIMES: RuntimeName[] = ["node", "deno", "workerd"];
/** How long a page may take to show an answer (a loaded CI machine, a Durable Object's first start). */
const SOON = { timeout: 10_000 };

/** Types into a CodeMirror editor (replacing what it holds) and presses Enter or nothing. */
async function typeInto(page: Page, selector: string, text: string) {
  await page.click(selector);
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(text);
}

describe.each(RUNTIMES)("the sessions web UI on %s", (runtime) => {
  let service: RunningService;
  beforeAll(async () => {
    service = await startService("sessions", { args: ["--db", ":memory:", "--threads", "1"] }, runtime);
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
  });

  test("a template, a session, values, a timeout, live console lines and the executions list", async () => {
    const page = await browser.newPage();
    await page.goto(`${service.baseUrl}/`);
    // The runtime summary, and the daemon's memory where the runtime tells it.
    await page.locator('[data-testid="summary"] >> text=0 live sessions').waitFor();
    if (runtime !== "workerd") expect(await page.locator('[data-testid="memory"]').textContent()).toMatch(/^daemon \d+ MiB resident, heap \d+ MiB$/);
    await page.click(`header a[href="#/templates"]`);
    const name = `ui-${runtime}-${Date.now()}`;
    await page.fill('input[aria-label="template name"]', name);
    await page.click("#create-template");
    await page.waitForSelector(`h2:has-text("${name}")`);
    // Limits small enough for a quick timeout, long enough for the slow input below.
    await page.waitForSelector('[aria-label="settings"]');
    await typeInto(page, '[aria-label="settings"]', JSON.stringify({ limits: { cpu_ms: 1500, wall_ms: 3000 } }));
    await page.click("text=Save settings");
    await page.waitForFunction(() => document.querySelector('[aria-label="settings"]')?.textContent?.includes('"max_events"'));
    expect(await page.locator('[aria-label="settings"]').textContent()).toContain('"cpu_ms": 1500');
    // The http module, allowed to reach the slow server.
    await page.selectOption('select[aria-label="module"]', "http");
    await page.click("text=Add module");
    await page.locator(".chip >> text=http").waitFor();
    // A module already added is not offered again.
    await expect.poll(() => page.locator('select[aria-label="module"] option').allTextContents(), SOON).toEqual(["fs", "path", "env"]);
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/sessions-template-${runtime}.png`, fullPage: true });
    await page.selectOption('select[aria-label="capability kind"]', "net");
    await page.fill('input[aria-label="capability name"]', slowHost);
    await page.click("text=Add capability");
    await page.locator(`td >> text=${slowHost}`).waitFor();

    // An API error is shown with its code: the same name again is a conflict.
    await page.fill('input[aria-label="template name"]', name);
    await page.click("#create-template");
    expect(await page.locator('[data-testid="error"] code').textContent()).toBe("CONFLICT");

    await page.click(`header a[href="#/sessions"]`);
    if (runtime === "workerd") {
      // No disk there: the worktree exists once a file is put under it, from the same page.
      await page.fill('input[aria-label="file path"]', "hello.js");
      await page.fill('input[aria-label="file contents"]', "exports.hi = 1;");
      await page.click("#put-file");
      await page.locator('[data-testid="stored"]').waitFor();
    } else expect(await page.locator("#put-file").count()).toBe(0);
    await page.selectOption('select[aria-label="template"]', { label: name });
    await page.click("#create-session");
    await page.waitForURL(/#\/sessions\/[0-9a-f-]+$/);
    await page.waitForSelector('[data-testid="repl-input"]');
    // The keys are explained once, under the input (not again as its placeholder).
    expect(await page.locator("main").evaluate((m) => (m as HTMLElement).innerText.split("Enter runs").length - 1)).toBe(1);
    await page.locator('[data-testid="summary"] >> text=1 live session').waitFor({ timeout: 5000 });

    const entry = (i: number) => page.locator('[data-testid="entry"]').nth(i);
    await typeInto(page, '[data-testid="repl-input"]', "1 + 1");
    await page.keyboard.press("Enter");
    await expect.poll(() => entry(0).locator('[data-testid="value"]').textContent(), SOON).toBe("2");

    await typeInto(page, '[data-testid="repl-input"]', "while (true) {}");
    await page.keyboard.press("Enter");
    await expect.poll(() => entry(1).locator('[data-testid="outcome"]').textContent(), { timeout: 10_000 }).toContain("timeout");

    // The session survived: another input, Shift+Enter for a second line.
    await typeInto(page, '[data-testid="repl-input"]', "const after = 'still here'");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.insertText("after");
    await page.keyboard.press("Enter");
    await expect.poll(() => entry(2).locator('[data-testid="value"]').textContent(), SOON).toBe("'still here'");
    // ArrowUp brings the last input back.
    await page.keyboard.press("ArrowUp");
    expect(await page.locator('[data-testid="repl-input"]').textContent()).toContain("const after = 'still here'");

    // A slow input: its first console line shows while it still runs.
    await typeInto(
      page,
      '[data-testid="repl-input"]',
      `for (let i = 0; i < 4; i++) { console.log("tick " + i); await require("http").fetch("http://${slowHost}/"); }`,
    );
    await page.keyboard.press("Enter");
    await entry(3).locator("text=tick 0").waitFor();
    expect(await entry(3).locator('[data-testid="outcome"]').count()).toBe(0); // still "running…"
    await expect.poll(() => entry(3).locator('[data-testid="outcome"]').textContent(), { timeout: 10_000 }).toContain("ok");
    expect(await entry(3).locator(".line.console").allTextContents()).toEqual(["logtick 0", "logtick 1", "logtick 2", "logtick 3"]);
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/sessions-console.png` });

    await page.click("#executions-tab");
    const rows = page.locator('[data-testid="executions"] tbody tr');
    await expect.poll(() => rows.count(), SOON).toBe(4);
    expect(await rows.nth(2).textContent()).toContain("timeout");
    await rows.nth(0).click();
    await page.locator("td.events >> text=tick 3").waitFor();
    await page.close();
  });

  test("the New session form keeps what is typed across refreshes; labelled fields; a message for an empty field; a confirmation on save", async () => {
    const page = await browser.newPage();
    const banner = page.locator('[data-testid="error"]');
    await page.goto(`${service.baseUrl}/#/templates`);
    // Create with no name says why nothing was created.
    await page.click("#create-template");
    await expect.poll(() => banner.textContent(), SOON).toContain("Template name is empty");
    expect(await banner.locator("code").textContent()).toBe("REQUIRED");
    const name = `form-${runtime}-${Date.now()}`;
    await page.getByLabel("Template name").fill(name);
    await page.click("#create-template");
    await page.waitForSelector(`h2:has-text("${name}")`);
    // Saving settings says so.
    await page.waitForSelector('[aria-label="settings"]');
    await page.click("text=Save settings");
    await expect.poll(() => page.locator('[data-testid="settings-note"]').textContent(), SOON).toMatch(/^Saved at /);

    await page.click(`header a[href="#/sessions"]`);
    await page.getByLabel("Workspace id").waitFor();
    // Every field of the form has a visible label.
    for (const label of ["Template", "Workspace id", "Base commit", "Worktree path"]) {
      expect(await page.locator(`form label.field:has-text("${label}")`).first().isVisible(), label).toBe(true);
    }
    const worktree = page.getByLabel("Worktree path");
    if (runtime === "workerd") {
      // Storage, not a disk: the upload form comes first and no worktree is made up.
      const [uploads, newSession] = await Promise.all([
        page.locator('[data-testid="uploads"]').boundingBox(),
        page.locator('h2:has-text("New session")').boundingBox(),
      ]);
      expect(uploads!.y).toBeLessThan(newSession!.y);
      expect(await worktree.inputValue()).toBe("");
    } else expect(await worktree.inputValue()).toBe("/tmp");
    await page.selectOption('select[aria-label="template"]', { label: name });
    await page.getByLabel("Workspace id").fill("typed-workspace");
    await page.getByLabel("Base commit").fill("abc123");
    // The sessions list refreshes (it polls): what was typed is still there afterwards.
    await page.waitForResponse((r) => /\/api\/v1\/sessions(\?|$)/.test(r.url()));
    await page.waitForResponse((r) => /\/api\/v1\/sessions(\?|$)/.test(r.url()));
    expect(await page.getByLabel("Workspace id").inputValue()).toBe("typed-workspace");
    expect(await page.getByLabel("Base commit").inputValue()).toBe("abc123");
    // ... and across a reload of the page.
    await page.reload();
    await page.getByLabel("Workspace id").waitFor();
    expect(await page.getByLabel("Workspace id").inputValue()).toBe("typed-workspace");
    expect(await page.locator('select[aria-label="template"] option:checked').textContent()).toBe(name);

    // An empty worktree path is refused with a message, not silently.
    await worktree.fill("");
    await page.click("#create-session");
    await expect.poll(() => banner.textContent(), SOON).toContain("Worktree path is empty");
    if (runtime === "workerd") {
      await page.getByLabel("File path").fill("init.js");
      await page.getByLabel("File contents").fill("globalThis.fromInit = 7;");
      await page.click("#put-file");
      await page.locator('[data-testid="stored"]').waitFor();
      // The directory just written is the worktree.
      expect(await worktree.inputValue()).toBe("/demo");
    } else await worktree.fill("/tmp");
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/sessions-new-${runtime}.png`, fullPage: true });
    await page.click("#create-session");
    await page.waitForURL(/#\/sessions\/[0-9a-f-]+$/);
    await page.click(`header a[href="#/sessions"]`);
    const row = page.locator('[data-testid="sessions"] tbody tr', { hasText: name });
    await row.waitFor(SOON);
    expect(await row.textContent()).toContain("ready");
    await page.close();
  });
});
