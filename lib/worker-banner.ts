/**
 * Where to go, for a Worker under `wrangler dev`: the command-line services print a banner when
 * they listen (cli-output.ts), but a Worker does not know its address until a request comes, so it
 * prints the same list once per isolate, at its first request, from that request's origin.
 */

/** `rows(origin)` as a banner, printed by `print` at the first call only (later calls do nothing). */
export function firstRequestBanner(
  title: string,
  rows: (origin: string) => [string, string | undefined][],
  print: (text: string) => void = (text) => console.log(text),
): (request: Request) => void {
  let printed = false;
  return (request) => {
    if (printed) return;
    printed = true;
    const origin = new URL(request.url).origin;
    const shown = rows(origin).filter((r): r is [string, string] => r[1] !== undefined && r[1] !== "");
    const width = Math.max(...shown.map(([k]) => k.length));
    print(["", `${title}  ${origin}`, ...shown.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), ""].join("\n"));
  };
}
