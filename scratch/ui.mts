import { launchChromium } from "../test/browser/chromium.ts";
const base = process.argv[2];
const browser = await launchChromium();
const page = await browser.newPage();
page.on("console", (m) => console.log("console:", m.text()));
page.on("pageerror", (e) => console.log("pageerror:", e.message));
page.setDefaultTimeout(5000);
try {
  await page.goto(`${base}/`);
  await page.click("text=Templates");
  await page.fill('input[aria-label="template name"]', "t" + Date.now());
  await page.click("#create-template");
  await page.waitForSelector('[aria-label="settings"]');
  console.log("settings ok");
  await page.click('[aria-label="settings"]');
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(JSON.stringify({ limits: { cpu_ms: 1500, wall_ms: 3000 } }));
  await page.click("text=Save settings");
  await page.waitForTimeout(500);
  console.log("after save:", (await page.locator('[aria-label="settings"]').textContent())?.slice(0, 300));
  await page.click("header >> text=Sessions");
  console.log("sessions ok");
} catch (e) { console.log("ERR", (e as Error).message.split("\n")[0]); }
await page.screenshot({ path: "scratch/ui.png" });
console.log(await page.locator("main").innerHTML().then((c) => c.slice(0, 1500)));
await browser.close();
