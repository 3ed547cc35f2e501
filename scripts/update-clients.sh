#!/usr/bin/env bash
# Bumps every agent CLI pinned in e2e/agents/clients.json to the newest
# version on npm and removes the contract snapshots of versions no longer
# pinned; `make update-clients` then rewrites the snapshots from a run of the
# new versions. Needs node and npm (and the npm registry).
set -euo pipefail
cd "$(dirname "$0")/.."
node - e2e/agents/clients.json e2e/agents/testdata <<'JS'
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const [file, testdata] = process.argv.slice(2);
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const keep = new Set();
for (const c of doc.clients) {
  const v = execFileSync('npm', ['view', c.package, 'version'], { encoding: 'utf8' }).trim();
  console.log(v === c.version ? `${c.name}: ${v} (unchanged)` : `${c.name}: ${c.version} -> ${v}`);
  c.version = v;
  keep.add(`${c.name}-${v}`);
}
fs.writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
for (const d of fs.readdirSync(testdata)) {
  const ours = doc.clients.some((c) => d.startsWith(`${c.name}-`));
  if (ours && fs.statSync(path.join(testdata, d)).isDirectory() && !keep.has(d)) {
    console.log(`removing the snapshots of ${d}`);
    fs.rmSync(path.join(testdata, d), { recursive: true });
  }
}
JS
