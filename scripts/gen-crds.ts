/**
 * Writes crds/capacitypolicies.autoscaling.signalr.dev.yaml (and the Helm chart's copy of it) and
 * docs/capacitypolicy.md from the schema in src/api. With --check, writes nothing and exits 1 when either file is out of date.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CHART_CRD_FILE, CRD_FILE, capacityPolicyCrdYaml } from "../src/api/crd.js";
import { capacityPolicyReferenceMarkdown, DOCS_FILE } from "../src/api/docs.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const outputs: [string, string][] = [
  [CRD_FILE, capacityPolicyCrdYaml()],
  [CHART_CRD_FILE, capacityPolicyCrdYaml()],
  [DOCS_FILE, capacityPolicyReferenceMarkdown()],
];

let stale = 0;
for (const [file, text] of outputs) {
  const path = join(root, file);
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) {
    console.log(`${file}: up to date`);
    continue;
  }
  if (check) {
    console.error(`${file}: out of date — run npm run gen:crds`);
    stale++;
    continue;
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.log(`${file}: written`);
}
if (stale > 0) process.exit(1);
