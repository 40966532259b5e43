/** Rendering of a Vega-Lite spec to SVG, headless (no browser, no canvas). */
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

/** Renders a Vega-Lite spec to SVG, headless. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
