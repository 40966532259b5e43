import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  EXPOSITION_CONTENT_TYPE,
  escapeHelp,
  escapeLabelValue,
  formatExposition,
  formatSampleValue,
  histogramSamples,
} from "./exposition.js";

/** Reads a quoted label value from just after its opening `"`: the value, and the index past the closing `"`. */
function readLabelValue(line: string, start: number): { value: string; end: number } {
  let i = start;
  let value = "";
  for (;;) {
    const c = line[i];
    if (c === undefined) throw new Error(`unterminated label value in ${line}`);
    if (c === '"') return { value, end: i + 1 };
    if (c !== "\\") {
      value += c;
      i++;
      continue;
    }
    const next = line[i + 1];
    if (next === "\\" || next === '"') value += next;
    else if (next === "n") value += "\n";
    else throw new Error(`bad escape \\${next} in ${line}`);
    i += 2;
  }
}

/** Reads `{label="value",…}` from index `start` (at its `{`): the labels, and the index past the `}`. */
function readLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  while (line[i] !== "}") {
    const labelMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!labelMatch) throw new Error(`no label name at ${i} in ${line}`);
    i += labelMatch[0].length;
    if (line.slice(i, i + 2) !== '="') throw new Error(`expected =" at ${i} in ${line}`);
    const { value, end } = readLabelValue(line, i + 2);
    i = end;
    labels[labelMatch[0]] = value;
    if (line[i] === ",") i++;
  }
  return { labels, end: i + 1 };
}

/**
 * A reader of one sample line, written from the format's grammar (not from the serializer):
 * `name[{label="value",…}] value [timestamp]`, label values unescaping `\\`, `\"` and `\n`.
 */
function readSampleLine(line: string): {
  name: string;
  labels: Record<string, string>;
  value: string;
  timestamp?: string;
} {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`no metric name in ${line}`);
  const name = nameMatch[0];
  const { labels, end } =
    line[name.length] === "{" ? readLabels(line, name.length) : { labels: {}, end: name.length };
  const rest = line.slice(end).split(" ");
  if (rest[0] !== "" || rest.length < 2 || rest.length > 3) throw new Error(`bad value part in ${line}`);
  const value = rest[1] as string;
  if (!/^(NaN|[+-]Inf|-?\d+(\.\d+)?(e[+-]?\d+)?)$/.test(value)) throw new Error(`bad value ${value}`);
  const timestamp = rest[2];
  if (timestamp !== undefined && !/^-?\d+$/.test(timestamp)) throw new Error(`bad timestamp ${timestamp}`);
  return { name, labels, value, ...(timestamp !== undefined ? { timestamp } : {}) };
}

/** The reverse of a HELP text's escapes. */
function unescapeHelp(text: string): string {
  return text.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));
}

describe("formatExposition", () => {
  it("writes HELP, TYPE and samples with labels and millisecond timestamps, ending with a line feed", () => {
    const text = formatExposition([
      {
        name: "requests_total",
        help: "Requests served.",
        type: "counter",
        samples: [
          {
            name: "requests_total",
            labels: { method: "GET", code: "200" },
            value: 1027,
            timestampMs: 1395066363000,
          },
          {
            name: "requests_total",
            labels: { method: "POST", code: "400" },
            value: 3,
            timestampMs: 1395066363000,
          },
        ],
      },
      { name: "temperature", help: "", type: "gauge", samples: [{ name: "temperature", value: -3.5 }] },
    ]);
    expect(text).toBe(
      [
        "# HELP requests_total Requests served.",
        "# TYPE requests_total counter",
        'requests_total{method="GET",code="200"} 1027 1395066363000',
        'requests_total{method="POST",code="400"} 3 1395066363000',
        "# HELP temperature ",
        "# TYPE temperature gauge",
        "temperature -3.5",
        "",
      ].join("\n"),
    );
    expect(EXPOSITION_CONTENT_TYPE).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(formatExposition([])).toBe("");
  });

  it("escapes label values and HELP texts as the format says", () => {
    expect(escapeLabelValue('C:\\DIR\\FILE.TXT "x"\nnext')).toBe('C:\\\\DIR\\\\FILE.TXT \\"x\\"\\nnext');
    expect(escapeHelp('a \\ b\n"quoted"')).toBe('a \\\\ b\\n"quoted"');
    const text = formatExposition([
      {
        name: "msdos_file_access_time_seconds",
        help: "Access time\nof a file (\\ included).",
        type: "gauge",
        samples: [
          {
            name: "msdos_file_access_time_seconds",
            labels: { path: "C:\\DIR\\FILE.TXT", error: 'Cannot find file:\n"FILE.TXT"' },
            value: 1.458255915e9,
          },
        ],
      },
    ]);
    expect(text).toBe(
      "# HELP msdos_file_access_time_seconds Access time\\nof a file (\\\\ included).\n" +
        "# TYPE msdos_file_access_time_seconds gauge\n" +
        'msdos_file_access_time_seconds{path="C:\\\\DIR\\\\FILE.TXT",error="Cannot find file:\\n\\"FILE.TXT\\""} 1458255915\n',
    );
  });

  it("any label value and HELP text reads back as written, one line each", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }),
        fc.string({ unit: "grapheme" }),
        fc.string({ unit: fc.constantFrom("\\", '"', "\n", "n", "a", "{", "}", ",", "=", " ") }),
        fc.double({ noNaN: false }),
        fc.integer({ min: 0, max: 2 ** 50 }),
        (help, a, b, value, ts) => {
          const text = formatExposition([
            {
              name: "x:y_z",
              help,
              type: "untyped",
              samples: [{ name: "x:y_z", labels: { a, b }, value, timestampMs: ts }],
            },
          ]);
          const lines = text.split("\n");
          expect(lines).toHaveLength(4);
          expect(lines[3]).toBe("");
          expect(unescapeHelp((lines[0] as string).slice("# HELP x:y_z ".length))).toBe(help);
          const read = readSampleLine(lines[2] as string);
          expect(read.labels).toEqual({ a, b });
          const readValue = read.value === "NaN" ? Number.NaN : Number(read.value.replace("Inf", "Infinity"));
          expect(readValue).toBe(value === 0 ? 0 : value); // -0 is written as 0
          expect(read.timestamp).toBe(String(ts));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("writes NaN and infinities the way Prometheus reads them", () => {
    expect(
      [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.005, 1e21, 2].map(formatSampleValue),
    ).toEqual(["NaN", "+Inf", "-Inf", "0.005", "1e+21", "2"]);
  });

  it("rejects invalid names, repeated families, foreign samples and fractional timestamps", () => {
    const family = (over: object) => [{ name: "m", help: "h", type: "gauge" as const, samples: [], ...over }];
    expect(() => formatExposition(family({ name: "1m" }))).toThrow('"1m" is not a valid metric name');
    expect(() => formatExposition(family({ name: "a-b" }))).toThrow(RangeError);
    expect(() => formatExposition([...family({}), ...family({})])).toThrow("appears twice");
    expect(() => formatExposition(family({ samples: [{ name: "m_sum", value: 1 }] }))).toThrow(
      'sample "m_sum" does not belong to gauge "m"',
    );
    expect(() =>
      formatExposition(family({ samples: [{ name: "m", labels: { "bad-name": "v" }, value: 1 }] })),
    ).toThrow('"bad-name" is not a valid label name');
    expect(() =>
      formatExposition(family({ samples: [{ name: "m", labels: { __name__: "v" }, value: 1 }] })),
    ).toThrow(RangeError);
    expect(() => formatExposition(family({ samples: [{ name: "m", value: 1, timestampMs: 1.5 }] }))).toThrow(
      "whole milliseconds",
    );
  });
});

describe("histogramSamples", () => {
  it("writes cumulative buckets, +Inf = count, sum and count, each with the series' labels and timestamp", () => {
    const samples = histogramSamples(
      "d_seconds",
      { route: "/a" },
      [
        { le: 0.005, count: 3 },
        { le: 0.01, count: 7 },
      ],
      0.05,
      10,
      5000,
    );
    const text = formatExposition([{ name: "d_seconds", help: "Durations.", type: "histogram", samples }]);
    expect(text.split("\n").slice(2)).toEqual([
      'd_seconds_bucket{route="/a",le="0.005"} 3 5000',
      'd_seconds_bucket{route="/a",le="0.01"} 7 5000',
      'd_seconds_bucket{route="/a",le="+Inf"} 10 5000',
      'd_seconds_sum{route="/a"} 0.05 5000',
      'd_seconds_count{route="/a"} 10 5000',
      "",
    ]);
  });

  it.each([
    ["bounds that do not increase", [1, 1], [1, 2], 2, "increase"],
    ["decreasing counts", [1, 2], [2, 1], 2, "cumulative"],
    ["a count below the buckets", [1], [2], 1, "below"],
    ["an infinite bound", [Number.POSITIVE_INFINITY], [2], 2, "finite"],
  ])("refuses %s", (_, bounds, counts, count, message) => {
    const buckets = bounds.map((le, i) => ({ le, count: counts[i] as number }));
    expect(() => histogramSamples("h", {}, buckets, 0, count)).toThrow(message);
  });
});
