import { describe, expect, it } from "vitest";
import { decodeStrings, encodeStrings } from "./wire.ts";

describe("string batches", () => {
  it("carry calls and answers whose payloads hold the separators, in order", () => {
    const messages = [
      { t: "call", id: 7, req: '12 {"a":"1:2:3","b":"c9:"}' },
      { t: "done", id: 12, res: "" },
      { t: "call", id: 8, req: "d1:5:xxxxx" },
      { t: "done", id: 3, res: "ü€😀:" },
    ];
    const text = encodeStrings(messages);
    expect(typeof text).toBe("string");
    expect(decodeStrings(text!)).toEqual(messages);
  });

  it("carry empty payloads, id 0, control characters and lone surrogates as they are", () => {
    const messages = [
      { t: "done", id: 0, res: "" },
      { t: "call", id: 0, req: "\x00\x01\x1f\r\n\u2028" },
      { t: "done", id: 2 ** 31, res: "\ud800 and \udfff" },
      { t: "call", id: 1, req: "" },
    ];
    expect(decodeStrings(encodeStrings(messages)!)).toEqual(messages);
  });

  it("leave a batch with any other message, or a payload that is not a string, to structured clone", () => {
    const batches: { t: string }[][] = [
      [{ t: "call", id: 1, req: "x" }, { t: "answer", ask: 1, ok: true, value: "y" }],
      [{ t: "call", id: 1, req: { op: "load" } }],
      [{ t: "done", id: 1, res: null }],
    ] as unknown as { t: string }[][];
    for (const batch of batches) expect(encodeStrings(batch)).toBeUndefined();
  });

  it("refuse a malformed batch rather than misread it", () => {
    expect(() => decodeStrings("x1:1:a")).toThrow(/malformed/);
    expect(() => decodeStrings("c1")).toThrow(/malformed/);
  });
});
