import { describe, expect, it } from "vitest";
import { assertJsonDepth, JsonDepthError, jsonTextDepth, MAX_JSON_DEPTH, parseJsonBounded, valueDepth } from "./json-limits.ts";

const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

describe("JSON nesting limit", () => {
  it("counts brackets outside strings only", () => {
    expect(jsonTextDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonTextDepth('"\\"[[["')).toBe(0);
    expect(jsonTextDepth("42")).toBe(0);
  });

  it("parses text at the limit and refuses one level more, before parsing", () => {
    expect(parseJsonBounded(nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(() => parseJsonBounded(nested(MAX_JSON_DEPTH + 1))).toThrow(JsonDepthError);
    // 100,000 levels: refused without a stack overflow anywhere
    expect(() => parseJsonBounded(nested(100_000))).toThrow(/deeper than 64/);
  });

  it("still throws SyntaxError for bad JSON within the limit", () => {
    expect(() => parseJsonBounded("{nope")).toThrow(SyntaxError);
  });

  it("measures parsed values iteratively", () => {
    expect(valueDepth({ a: [1, { b: {} }] })).toBe(4);
    expect(jsonTextDepth(JSON.stringify({ a: [1, { b: {} }] }))).toBe(4);
    expect(valueDepth("x")).toBe(0);
    let deep: unknown = [];
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(valueDepth(deep)).toBe(MAX_JSON_DEPTH + 1);
    expect(() => assertJsonDepth(deep)).toThrow(JsonDepthError);
    expect(() => assertJsonDepth({ a: { b: 1 } }, 2)).not.toThrow();
    expect(() => assertJsonDepth({ a: { b: {} } }, 2)).toThrow(JsonDepthError);
  });
});
