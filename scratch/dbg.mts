import { launchChromium } from "../test/browser/chromium.ts";
const browser = await launchChromium();
const page = await browser.newPage();
page.on("console", (m) => console.log("console:", m.text()));
page.on("pageerror", (e) => console.log("pageerror:", e.message));
await page.goto("http://127.0.0.1:5599/debug/ui");
await page.waitForTimeout(1500);
console.log(await page.locator("body").innerText());
await browser.close();
