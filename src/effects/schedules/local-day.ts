/**
 * Calendar days in an app's time zone, for the schedules engine (WIRE §5.5 schedules[]):
 * which local day an instant falls on, whether that day's 08:00 scan is due, and which
 * local day a row's date field names. Pure; the zone rules come from the runtime's
 * `Intl.DateTimeFormat`.
 *
 * The 08:00 rule, daylight saving included: an app's scan for a local day is due from the
 * first instant its wall clock reads 08:00 or later on that day. On a day whose clocks
 * jump forward over 08:00 the scan is due from the jump; on a day whose clocks fall back
 * over 08:00 the wall clock reads 08:xx twice, and the scan (recorded per local day) runs
 * at the first. A local day a zone skips entirely (Pacific/Apia, 2011-12-30) is never
 * scanned, so rows due on it do not fire.
 */

/** The local hour at which an app's daily scan becomes due. */
export const SCAN_HOUR = 8;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** An ISO datetime: the date, a time to the minute or finer, and an optional offset (`Z`, `+13:00`, `-0800`). */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
/** Instants whose local date still has a four-digit year in every zone. */
const EARLIEST = new Date(0).setUTCFullYear(1, 0, 2);
const LATEST = new Date(0).setUTCFullYear(9999, 11, 30);

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The app's zone when the runtime knows it, else UTC (no timezone set, or a name it does not know). */
export function zoneOrUtc(zone: string | null): string {
  if (!zone) return "UTC";
  try {
    formatterFor(zone);
    return zone;
  } catch {
    return "UTC";
  }
}

export interface WallClock {
  /** The local calendar date, `YYYY-MM-DD`. */
  date: string;
  hour: number;
  minute: number;
}

/** What a wall clock in `zone` reads at `instant` (ms since the epoch). */
export function wallClock(instant: number, zone: string): WallClock {
  const parts = Object.fromEntries(formatterFor(zone).formatToParts(new Date(instant)).map((part) => [part.type, part.value]));
  return { date: `${parts.year.padStart(4, "0")}-${parts.month}-${parts.day}`, hour: Number(parts.hour), minute: Number(parts.minute) };
}

/** The local day whose scan is due at `instant`, or null while the wall clock still reads before 08:00. */
export function dueScanDay(instant: number, zone: string): string | null {
  const clock = wallClock(instant, zone);
  return clock.hour >= SCAN_HOUR ? clock.date : null;
}

/** Whether `text` is a `YYYY-MM-DD` date that exists in the calendar. */
export function isCalendarDate(text: string): boolean {
  const match = DATE_ONLY.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** `date` moved by `days` calendar days (negative goes back); null past the calendar's reach. */
export function addDays(date: string, days: number): string | null {
  const [year, month, day] = date.split("-").map(Number);
  const moved = new Date(0);
  moved.setUTCFullYear(year, month - 1, day + days);
  const time = moved.getTime();
  return Number.isFinite(time) && time >= EARLIEST && time <= LATEST ? moved.toISOString().slice(0, 10) : null;
}

/**
 * The local day a row's date field names, or null when it names none (WIRE §5.5): a
 * `YYYY-MM-DD` string is that day; an ISO datetime with an offset, or an epoch-ms number,
 * is an instant whose day is read in the app's zone; an ISO datetime without an offset is
 * already a wall time in the app's zone, so its date part is the day.
 */
export function rowDay(value: unknown, zone: string): string | null {
  if (typeof value === "number") {
    return Number.isFinite(value) && value >= EARLIEST && value <= LATEST ? wallClock(Math.floor(value), zone).date : null;
  }
  if (typeof value !== "string") return null;
  const text = value.trim();
  if (isCalendarDate(text)) return text;
  const match = DATE_TIME.exec(text);
  if (!match || !isCalendarDate(match[1])) return null;
  if (match[5] === undefined) return match[1];
  const offset = match[5].toUpperCase() === "Z" ? "Z" : `${match[5].slice(0, 3)}:${match[5].slice(-2)}`;
  const instant = Date.parse(`${match[1]}T${text.slice(match[1].length + 1, text.length - match[5].length)}${offset}`);
  return Number.isFinite(instant) && instant >= EARLIEST && instant <= LATEST ? wallClock(instant, zone).date : null;
}
