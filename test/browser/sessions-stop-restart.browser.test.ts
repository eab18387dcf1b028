/**
 * The session console's Stop and Restart buttons in headless Chromium, on each runtime: Stop ends
 * an execution that waits on a timer (outcome `cancelled`, its closing system line), and Restart
 * gives the session a fresh global scope with its startup file run again.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
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

const RUNTIMES: RuntimeName[] = ["node", "deno", "workerd"];
const SOON = { timeout: 10_000 };
const BOOT = "globalThis.boots = (globalThis.boots ?? 0) + 1;";

async function typeInto(page: Page, selector: string, text: string) {
  await page.click(selector);
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(text);
}

describe.each(RUNTIMES)("Stop and Restart in the sessions console on %s", (runtime) => {
  let service: RunningService;
  let dir: string | undefined;
  beforeAll(async () => {
    service = await startService("sessions", { args: ["--db", ":memory:", "--threads", "1"] }, runtime);
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function api(method: string, path: string, body?: unknown) {
    const res = await fetch(`${service.baseUrl}/api/v1${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
    expect(res.ok, `${method} ${path}: ${res.status}`).toBe(true);
    return res.json();
  }

  /** A session whose startup file counts its runs in `boots`. */
  async function bootingSession(): Promise<string> {
    let worktree: string;
    if (runtime === "workerd") {
      worktree = `/ui-restart-${Date.now()}`;
      const res = await fetch(`${service.baseUrl}/api/v1/worktree-files?root=${encodeURIComponent(worktree)}&path=boot.js`, {
        method: "PUT",
        body: BOOT,
        headers: { "content-type": "text/plain" },
      });
      expect(res.status).toBe(204);
    } else {
      worktree = dir = await mkdtemp(join(tmpdir(), "sessions-ui-"));
      await writeFile(join(worktree, "boot.js"), BOOT);
    }
    const template = await api("POST", "/templates", { name: `stop-restart-${runtime}-${Date.now()}` });
    await api("POST", `/templates/${template.id}/startup-files`, { path: "boot.js" });
    const session = await api("POST", "/sessions", { template_id: template.id, workspace_id: "ws", base_commit_oid: "abc", worktree_path: worktree });
    return session.id;
  }

  test("Stop cancels a running execution; Restart resets the global scope and runs the startup file again", async () => {
    const id = await bootingSession();
    const page = await browser.newPage();
    await page.goto(`${service.baseUrl}/#/sessions/${id}`);
    await page.waitForSelector('[data-testid="repl-input"]');
    const entry = (i: number) => page.locator('[data-testid="entry"]').nth(i);

    await typeInto(page, '[data-testid="repl-input"]', "var mine = 'kept'; boots");
    await page.keyboard.press("Enter");
    await expect.poll(() => entry(0).locator('[data-testid="value"]').textContent(), SOON).toBe("1");
    expect(await page.locator('[data-testid="stop"]').count()).toBe(0); // only while something runs

    await typeInto(page, '[data-testid="repl-input"]', "console.log('waiting'); await new Promise((r) => setTimeout(r, 20000))");
    await page.keyboard.press("Enter");
    await entry(1).locator("text=waiting").waitFor(SOON);
    await page.click('[data-testid="stop"]');
    await expect.poll(() => entry(1).locator('[data-testid="outcome"]').textContent(), SOON).toContain("cancelled");
    expect(await entry(1).locator(".line.system").last().textContent()).toContain("execution cancelled");
    expect(await page.locator('[data-testid="stop"]').count()).toBe(0);

    // The session is still there, with its state.
    await typeInto(page, '[data-testid="repl-input"]', "mine");
    await page.keyboard.press("Enter");
    await expect.poll(() => entry(2).locator('[data-testid="value"]').textContent(), SOON).toBe("'kept'");

    await page.click('[data-testid="restart"]');
    await page.locator('[data-testid="note"]').waitFor(SOON);
    await typeInto(page, '[data-testid="repl-input"]', "[boots, typeof mine]");
    await page.keyboard.press("Enter");
    await expect.poll(() => entry(3).locator('[data-testid="value"]').textContent(), SOON).toBe("[ 1, 'undefined' ]");
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: `${process.env.SCREENSHOT_DIR}/sessions-stop-restart-${runtime}.png` });
    await page.close();
  });
});
