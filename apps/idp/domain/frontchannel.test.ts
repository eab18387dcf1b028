import { describe, expect, it } from "vitest";
import { frameSources } from "./frontchannel.ts";

describe("frameSources", () => {
  it("admits each frame's exact path (the query is not matched), once", () => {
    const frames = [
      { client_id: "a", url: "http://127.0.0.1:4000/fc?iss=x&sid=y" },
      { client_id: "b", url: "http://127.0.0.1:4000/fc" },
      { client_id: "c", url: "https://rp.example.test/logout/frame" },
    ];
    expect(frameSources(frames)).toEqual(["http://127.0.0.1:4000/fc", "https://rp.example.test/logout/frame"]);
  });
  it("falls back to the origin for a path a CSP source cannot carry", () => {
    expect(frameSources([{ client_id: "a", url: "http://rp.test/a;b,c" }])).toEqual(["http://rp.test"]);
  });
});
