import { readFileSync } from "node:fs";
const p = JSON.parse(readFileSync(process.argv[2], "utf8"));
const self = new Map(); const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = p.timeDeltas; const total = dt.reduce((a, b) => a + b, 0);
p.samples.forEach((id, i) => { const n = byId.get(id); const k = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + (dt[i] || 0)); });
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] || 35));
for (const [k, v] of rows) console.log((v / total * 100).toFixed(1).padStart(5) + "%  " + k);
// inclusive by file
const incl = new Map();
p.samples.forEach((id, i) => { let n = byId.get(id); const seen = new Set(); while (n) { const f = n.callFrame.url.split("/").slice(-2).join("/"); if (!seen.has(f)) { seen.add(f); incl.set(f, (incl.get(f) || 0) + (dt[i] || 0)); } n = n.parent; } });
