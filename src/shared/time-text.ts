/**
 * Times and durations as other tools write them, read strictly. Pure.
 *
 * Times — RFC 3339 `date-time` (section 5.6): `2025-06-02T11:40:00Z` (Azure Monitor's REST API,
 * also with seven fraction digits: `…:00.0000000Z`), `2025-06-02T11:40:00+00:00` (Python's
 * `datetime.isoformat()`, which the Azure CLI prints), any offset `±HH:MM` (`-00:00` included), a
 * lower-case `t` / `z`, and a space instead of the `T` (the RFC's note allows it; Python prints it
 * with `isoformat(" ")`). An offset with seconds (`+05:30:15`, Python's form for offsets that are
 * not whole minutes) is read too. A time without an offset is refused: it names no instant.
 * Fractions past the millisecond are truncated (a JavaScript `Date` holds milliseconds).
 *
 * Durations — a time span as Python's `str(timedelta)` prints it (the Azure CLI's `interval` of
 * `az monitor metrics list`): `0:01:00`, `1:00:00`, `1 day, 0:00:00`, `2 days, 3:04:05.500000`,
 * `-1 day, 23:59:00` (days carry the sign, the clock part is positive); and as .NET's `TimeSpan`
 * prints it (format "c": Azure Monitor's own error messages, PowerShell): `00:01:00`,
 * `1.00:00:00`, `-00:00:30.5000000`. ISO 8601 durations (`PT1M`) are read by
 * `timeGrainSeconds` (azure/metric-definitions.ts); {@link isoDuration} writes one.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2})(?::(\d{2}))?)$/;

/** Days in `month` (1–12) of `year`, in the proleptic Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Milliseconds since the epoch of an RFC 3339 date-time (see the module comment for the forms);
 * `undefined` for anything else: no offset, a date or time out of range (`2025-02-30`, `24:00:00`,
 * a leap second `:60`, an offset of 24 hours or more), other layouts.
 */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetSeconds = 0;
  if (m[8] === undefined) {
    const [h, min, s] = [m[10], m[11], m[12]].map((x) => Number(x ?? 0)) as [number, number, number];
    if (h > 23 || min > 59 || s > 59) return undefined;
    offsetSeconds = (m[9] === "-" ? -1 : 1) * (h * 3600 + min * 60 + s);
  }
  const fraction = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, "0"));
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, fraction);
  return utc.getTime() - offsetSeconds * 1000;
}

const PYTHON_TIMEDELTA = /^(?:(-?\d+) days?, )?(\d{1,2}):([0-5]\d):([0-5]\d)(?:\.(\d{6}))?$/;
const DOTNET_TIMESPAN = /^(-)?(?:(\d+)\.)?(\d{2}):([0-5]\d):([0-5]\d)(?:\.(\d{1,7}))?$/;

/** Seconds of a fraction's digits (`"5"` → 0.5, `"000001"` → 0.000001). */
function fractionSeconds(digits: string | undefined): number {
  return digits === undefined ? 0 : Number(`0.${digits}`);
}

/**
 * Seconds of a time span as Python's `str(timedelta)` or .NET's `TimeSpan` prints it (see the
 * module comment); negative for a negative span; `undefined` for anything else (hours above 23,
 * minutes or seconds above 59, an ISO 8601 duration, other text).
 */
export function parseTimeSpan(text: string): number | undefined {
  const t = text.trim();
  const py = PYTHON_TIMEDELTA.exec(t);
  if (py) {
    const hours = Number(py[2]);
    if (hours > 23) return undefined;
    const clock = hours * 3600 + Number(py[3]) * 60 + Number(py[4]) + fractionSeconds(py[5]);
    return Number(py[1] ?? 0) * 86_400 + clock;
  }
  const net = DOTNET_TIMESPAN.exec(t);
  if (net) {
    const hours = Number(net[3]);
    if (hours > 23) return undefined;
    const magnitude =
      Number(net[2] ?? 0) * 86_400 +
      hours * 3600 +
      Number(net[4]) * 60 +
      Number(net[5]) +
      fractionSeconds(net[6]);
    return net[1] === "-" ? -magnitude : magnitude;
  }
  return undefined;
}

/**
 * The ISO 8601 duration of a whole, positive number of seconds, in days, hours, minutes and
 * seconds: 60 → `PT1M`, 86,400 → `P1D`, 90,061 → `P1DT1H1M1S`.
 * @throws RangeError for a number of seconds that is not a whole number above 0.
 */
export function isoDuration(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds <= 0) {
    throw new RangeError(`a duration must be a whole number of seconds above 0, got ${seconds}`);
  }
  const days = Math.floor(seconds / 86_400);
  const rest = seconds % 86_400;
  const parts: [number, string][] = [
    [Math.floor(rest / 3600), "H"],
    [Math.floor((rest % 3600) / 60), "M"],
    [rest % 60, "S"],
  ];
  const time = parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join("");
  return `P${days > 0 ? `${days}D` : ""}${time ? `T${time}` : ""}`;
}
