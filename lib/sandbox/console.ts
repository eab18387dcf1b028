/**
 * The host end of the sandbox console: the prelude formats the arguments inside QuickJS and
 * calls this one function with (level, text). Counting against the limits happens here, before
 * the event is emitted, so an over-limit line is never delivered.
 */
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import { CONSOLE_LEVELS, type ConsoleLevel } from "./prelude.ts";

export type { ConsoleLevel };

/** Receives one console line; returns false when it was refused (limit reached): the sandbox
 * code is then stopped. */
export type ConsoleSink = (level: ConsoleLevel, text: string) => boolean;

export function newConsoleEmitter(ctx: QuickJSContext, sink: ConsoleSink): QuickJSHandle {
  return ctx.newFunction("emit", (levelHandle?: QuickJSHandle, textHandle?: QuickJSHandle): VmCallResult<QuickJSHandle> | undefined => {
    const level = CONSOLE_LEVELS[levelHandle ? ctx.getNumber(levelHandle) : 0] ?? "log";
    const text = textHandle ? ctx.getString(textHandle) : "";
    if (sink(level, text)) return undefined;
    return { error: ctx.newError({ name: "InternalError", message: "output limit exceeded" }) };
  });
}
