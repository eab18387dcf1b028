/**
 * Exercises the Deno thread pool (run by deno-threads.test.ts as
 * `deno run -A apps/sessions/live/testdata/deno-threads-check.ts <worktree>`; Deno resolves the bare
 * imports only for scripts inside the repo). Prints one JSON line with what it saw.
 */
import { createDenoThreadRuntimes } from "../deno-threads.ts";
import { collect, hasSettled, repl, runFile, sessionSpec, timerTicks } from "../testing.ts";

const worktree = (globalThis as unknown as { Deno: { args: string[] } }).Deno.args[0]!;
const pool = createDenoThreadRuntimes({ threads: 2, hostEnv: { APP_X: "x" } });
const a = sessionSpec({ worktreePath: worktree, modules: ["env", "fs"], capabilities: [{ kind: "env", name: "APP_*", enabled: true, config: {} }] });
const b = sessionSpec({ worktreePath: worktree });
await pool.open(a);
await pool.open(b);
const first = await collect(pool, a.sessionId, repl("console.log(require('./util').answer, require('env').APP_X); await require('fs').readFile('util.js')"));
const file = await collect(pool, a.sessionId, runFile("main.js", "console.log(args.n * 2)", { n: 21 }));

// A 1.5 s loop in session a: the main thread's timers keep running, b answers, a is busy.
const loop = pool.execute(a.sessionId, repl("const end = Date.now() + 1500; while (Date.now() < end) {}; 'looped'"), () => {});
const probed = timerTicks(
  (async () => {
    await new Promise((r) => setTimeout(r, 50));
    const busy = await pool.execute(a.sessionId, repl("1"), () => {}).then(() => "no error", (e: { code?: string }) => e.code);
    const other = await collect(pool, b.sessionId, repl("'b answers'"));
    // Both answers came while a's loop still ran.
    const answeredDuringLoop = !(await hasSettled(loop));
    return { busy, other, answeredDuringLoop, looped: await loop };
  })(),
);
const { result, ticks } = await probed;
await pool.shutdown();

console.log(
  JSON.stringify({
    first: { events: first.events.map((e) => e.type), console: first.events[1]?.payload.text, value: first.outcome.result?.json },
    file: file.events[1]?.payload.text,
    busy: result.busy,
    other: result.other.outcome.result?.json,
    looped: result.looped.result?.json,
    answeredDuringLoop: result.answeredDuringLoop,
    mainThreadTicks: ticks,
  }),
);
