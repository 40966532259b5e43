/**
 * Charts over time, as SVG, for `simulate` and `demo`: the bucket size that keeps a long run within
 * a number of points per line, the panels both draw (connections and units on a symmetric-log
 * scale, load on a linear one with its target as a dashed rule, one line per series, time on a UTC
 * axis) stacked into one Vega-Lite spec, and the headless rendering of a spec to SVG. Each user
 * brings its own data points and series; nothing here knows what a strategy or a timeline is.
 */
export * from "./buckets.js";
export * from "./render.js";
export * from "./time-chart.js";
