import { describe, expect, it } from "vitest";
import { formatTable } from "./output.js";

describe("formatTable", () => {
  it("aligns columns, numbers to the right", () => {
    expect(
      formatTable(
        ["NAME", "N"],
        [
          ["a", 1],
          ["bbb", 1000],
        ],
      ),
    ).toBe("NAME      N\na         1\nbbb   1,000\n");
  });

  it("gives a cell with line breaks as many lines, the other cells blank after the first", () => {
    expect(
      formatTable(
        ["CHECK", "RESULT", "DETAIL"],
        [
          ["token", "OK", "one line"],
          ["metrics", "FAIL", "asked X\n403 refused\nAzure: no"],
          ["list", "OK", "fine"],
        ],
      ),
    ).toBe(
      [
        "CHECK    RESULT  DETAIL",
        "token    OK      one line",
        "metrics  FAIL    asked X",
        "                 403 refused",
        "                 Azure: no",
        "list     OK      fine",
        "",
      ].join("\n"),
    );
  });
});
