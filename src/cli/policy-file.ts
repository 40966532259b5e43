/**
 * A CapacityPolicy manifest named by `--policy` (YAML or JSON, as applied or as
 * `kubectl get capol NAME -o yaml` prints it, status included), for the commands that read one
 * (`recommend`, `check`).
 */
import { type CapacityPolicy, PolicyError, parsePolicyYaml } from "../api/index.js";
import { UsageError } from "./errors.js";
import { readFlagText } from "./flags.js";

/**
 * Parses the text of a policy file; `file` names it in messages.
 * @throws UsageError with the first validation error (and how many more there are).
 */
function parsePolicyFile(text: string, file: string): CapacityPolicy {
  try {
    return parsePolicyYaml(text);
  } catch (err) {
    if (err instanceof PolicyError) {
      const first = err.errors[0] ?? err.message.split("\n")[0] ?? "invalid";
      const more = err.errors.length > 1 ? ` (and ${err.errors.length - 1} more)` : "";
      throw new UsageError(`policy ${file}: ${first}${more}`);
    }
    throw err;
  }
}

/**
 * Reads and parses the policy file `file` (relative to `cwd`).
 * @throws UsageError when it cannot be read or is not a valid CapacityPolicy.
 */
export async function readPolicyFile(file: string, cwd: string): Promise<CapacityPolicy> {
  return parsePolicyFile(await readFlagText(file, "--policy", cwd), file);
}
