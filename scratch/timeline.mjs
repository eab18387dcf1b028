import { readFileSync, readdirSync } from "node:fs";
const dir = process.argv[2];
for (const f of readdirSync(dir)) {
  const p = JSON.parse(readFileSync(`${dir}/${f}`, "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  for (const n of p.nodes) for (const c of n.children ?? []) byId.get(c).parent = n;
  const self = new Map(); let t = 0; const total = p.timeDeltas.reduce((a, b) => a + b, 0);
  // inclusive time per url (module file), first 400ms only
  const incl = new Map();
  p.samples.forEach((id, i) => { t += p.timeDeltas[i]; if (t > 400000) return; let n = byId.get(id); const seen = new Set(); while (n) { const k = (n.callFrame.url || n.callFrame.functionName).split("/").slice(-2).join("/"); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) || 0) + p.timeDeltas[i]); } n = n.parent; } });
  console.log(f, "total ms", (total / 1000).toFixed(0));
  for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log("  ", (v / 1000).toFixed(1).padStart(7), "ms", k);
}
