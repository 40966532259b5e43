/**
 * YAML files handed in by the user or the cluster (a workload file, the tenancy file): parsed, then
 * checked against a TypeBox schema. What is wrong is told by the caller, in its own words.
 */
import type { Static, TSchema } from "typebox";
import Value from "typebox/value";
import { parse as parseYaml } from "yaml";

/** What is wrong with a YAML file: not YAML (the parser's first line), or its first error against the schema. */
export type YamlFileProblem =
  | { readonly kind: "yaml"; readonly message: string }
  | { readonly kind: "schema"; readonly path: string; readonly message: string | undefined };

/**
 * The value of the YAML `text`, checked against `schema`.
 * @throws the error `fail` makes of the first problem.
 */
export function parseYamlFile<S extends TSchema>(
  text: string,
  schema: S,
  fail: (problem: YamlFileProblem) => Error,
): Static<S> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw fail({ kind: "yaml", message: (err as Error).message.split("\n")[0] as string });
  }
  if (!Value.Check(schema, doc)) {
    const first = Value.Errors(schema, doc)[0];
    throw fail({ kind: "schema", path: first?.instancePath ?? "", message: first?.message });
  }
  return doc;
}
