import { describe, expect, it } from "vitest";
import { renderValue } from "./render.ts";
import { call, scriptHost } from "../testing.ts";

describe("the default renderer", () => {
  it("renders data as an escaped page: title, tables for lists of objects, lists, definition lists", async () => {
    const page = await renderValue({
      title: "Notes <b>",
      notes: [{ id: "n1", text: "<script>alert(1)</script>" }, { id: "n2", done: true }],
      tags: ["a&b", 2],
      meta: { owner: "alice" },
    });
    expect(page).toContain("<title>Notes &lt;b&gt;</title>");
    expect(page).toContain("<h1>Notes &lt;b&gt;</h1>");
    expect(page).toContain("<table><thead><tr><th>id</th><th>text</th><th>done</th></tr></thead>");
    expect(page).toContain("<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>");
    expect(page).not.toContain("<script>");
    expect(page).toContain("<ul><li>a&amp;b</li><li>2</li></ul>");
    expect(page).toContain("<dl><dt>owner</dt><dd>alice</dd></dl>");
    expect(await renderValue(42)).toContain("<body>42</body>");
  });

  it("is what a host with it gives a handler's returned object", async () => {
    const host = await scriptHost(`require("httpmod").app().get("/").public().handle(() => ({ title: "Home", items: ["x"] }));`, { renderer: renderValue });
    const res = await call(host, "GET", "/");
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.text).toContain("<h1>Home</h1>");
    await host.close();
  });
});
