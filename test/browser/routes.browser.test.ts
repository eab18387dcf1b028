/**
 * The route host's dev page in a real browser: the plan table of a script, then, after an edit
 * that does not load, the error above the table while the previous routes keep serving.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type RunningService, startService } from "../runtimes/service.ts";
import { launchChromium } from "./chromium.ts";

let browser: Browser;
let service: RunningService;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "routes-dev-page-"));
  await writeFile(
    join(dir, "app.js"),
    `const h = require("httpmod"); const app = h.app();\napp.get("/").public().handle(() => "home");\napp.post("/notes").auth(h.user().required()).csrf().allow("notes:write").audit("note.create").handle(() => "ok");`,
  );
  service = await startService("routes", { args: ["--script", join(dir, "app.js"), "--dev", "--threads", "1"] }, "node");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("shows the plan table, and a script error above it while the old routes serve", async () => {
  const page = await browser.newPage();
  await page.goto(`${service.baseUrl}/_routes`);
  expect(await page.locator("#load-ok").textContent()).toBe("The script loaded.");
  // The host's sign-in routes first, then the script's, each with where it was registered.
  const cells = async (i: number) => page.locator("tbody tr").nth(i).locator("td").allTextContents();
  expect(await page.locator("tbody tr").count()).toBe(6);
  expect(await cells(0)).toEqual(["GET", "/auth/login", "public", "", "", "", "", "(host)"]);
  expect(await cells(4)).toEqual(["GET", "/", "public", "", "", "", "", "/app.js:2:29"]);
  expect(await cells(5)).toEqual(["POST", "/notes", "auth", "", "yes", "notes:write", "note.create", "/app.js:3:101"]);

  await writeFile(join(dir, "app.js"), `const h = require("httpmod"); h.app().get("/", () => "old style");`);
  await page.goto(`${service.baseUrl}/_routes`);
  expect(await page.locator("#load-error").textContent()).toContain("app.get(pattern, handler) was removed");
  expect(await page.locator("tbody tr").count()).toBe(6);
  expect(await (await fetch(`${service.baseUrl}/`)).text()).toBe("home");
  await page.close();
});
