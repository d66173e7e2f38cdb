// The schedules engine's calendar (src/effects/schedules/local-day.ts): which local day an
// instant falls on in an app's zone, when that day's 08:00 scan becomes due (daylight
// saving changes included), and which day a row's date field names.
import { describe, expect, it } from "vitest";
import { addDays, dueScanDay, rowDay, wallClock, zoneOrUtc } from "../../../src/effects/schedules/local-day";

const at = (iso: string) => Date.parse(iso);

describe("the 08:00 scan", () => {
  it("is due from 08:00 local on the local date, not a minute before", () => {
    expect(dueScanDay(at("2026-11-27T07:59:00Z"), "UTC")).toBeNull();
    expect(dueScanDay(at("2026-11-27T08:00:00Z"), "UTC")).toBe("2026-11-27");
    expect(dueScanDay(at("2026-11-27T23:59:00Z"), "UTC")).toBe("2026-11-27");
    expect(dueScanDay(at("2026-11-28T00:00:00Z"), "UTC")).toBeNull();
  });

  it("the same instant is past 08:00 in Auckland and before it in Los Angeles, on different dates", () => {
    // 2026-11-27T19:30Z is 08:30 on the 28th in Auckland (NZDT, +13) and 11:30 on the 27th in LA (PST, -8).
    const instant = at("2026-11-27T19:30:00Z");
    expect(wallClock(instant, "Pacific/Auckland")).toEqual({ date: "2026-11-28", hour: 8, minute: 30 });
    expect(dueScanDay(instant, "Pacific/Auckland")).toBe("2026-11-28");
    expect(dueScanDay(instant, "America/Los_Angeles")).toBe("2026-11-27");
    // 2026-11-27T14:00Z: 03:00 on the 28th in Auckland (not yet), 06:00 on the 27th in LA (not yet).
    expect(dueScanDay(at("2026-11-27T14:00:00Z"), "Pacific/Auckland")).toBeNull();
    expect(dueScanDay(at("2026-11-27T14:00:00Z"), "America/Los_Angeles")).toBeNull();
  });

  it("follows the wall clock across a spring-forward day", () => {
    // New York springs forward on 2026-03-08 at 02:00: 08:00 is 12:00Z that day, 13:00Z the day before.
    expect(dueScanDay(at("2026-03-07T12:59:00Z"), "America/New_York")).toBeNull();
    expect(dueScanDay(at("2026-03-07T13:00:00Z"), "America/New_York")).toBe("2026-03-07");
    expect(dueScanDay(at("2026-03-08T11:59:00Z"), "America/New_York")).toBeNull();
    expect(dueScanDay(at("2026-03-08T12:00:00Z"), "America/New_York")).toBe("2026-03-08");
  });

  it("follows the wall clock across a fall-back day", () => {
    // New York falls back on 2026-11-01 at 02:00: 08:00 is 13:00Z that day, 12:00Z the day before.
    expect(dueScanDay(at("2026-10-31T12:00:00Z"), "America/New_York")).toBe("2026-10-31");
    expect(dueScanDay(at("2026-11-01T12:59:00Z"), "America/New_York")).toBeNull();
    expect(dueScanDay(at("2026-11-01T13:00:00Z"), "America/New_York")).toBe("2026-11-01");
  });

  it("follows a southern-hemisphere change and a half-hour zone", () => {
    // Auckland falls back on 2026-04-05 at 03:00 (+13 → +12): 08:00 is 20:00Z on the 4th.
    expect(dueScanDay(at("2026-04-04T19:59:00Z"), "Pacific/Auckland")).toBeNull();
    expect(dueScanDay(at("2026-04-04T20:00:00Z"), "Pacific/Auckland")).toBe("2026-04-05");
    // Kolkata is +05:30 all year: 08:00 is 02:30Z.
    expect(dueScanDay(at("2026-06-01T02:29:00Z"), "Asia/Kolkata")).toBeNull();
    expect(dueScanDay(at("2026-06-01T02:30:00Z"), "Asia/Kolkata")).toBe("2026-06-01");
  });

  it("never scans a day the zone skipped", () => {
    // Samoa jumped from 2011-12-29 23:59 (-10) to 2011-12-31 00:00 (+14).
    expect(wallClock(at("2011-12-30T09:59:00Z"), "Pacific/Apia").date).toBe("2011-12-29");
    expect(wallClock(at("2011-12-30T10:00:00Z"), "Pacific/Apia").date).toBe("2011-12-31");
    expect(dueScanDay(at("2011-12-30T18:00:00Z"), "Pacific/Apia")).toBe("2011-12-31");
  });

  it("an app without a timezone, or with one the runtime does not know, runs on UTC", () => {
    expect(zoneOrUtc(null)).toBe("UTC");
    expect(zoneOrUtc("Not/A_Zone")).toBe("UTC");
    expect(zoneOrUtc("Europe/Paris")).toBe("Europe/Paris");
  });
});

describe("a row's date", () => {
  const zone = "Pacific/Auckland";

  it("a YYYY-MM-DD string is that day, in any zone", () => {
    expect(rowDay("2026-11-28", zone)).toBe("2026-11-28");
    expect(rowDay(" 2026-11-28 ", "America/Los_Angeles")).toBe("2026-11-28");
  });

  it("an ISO datetime with an offset, or an epoch-ms number, is read in the app's zone", () => {
    expect(rowDay("2026-11-27T12:00:00Z", zone)).toBe("2026-11-28");
    expect(rowDay("2026-11-27T12:00:00Z", "America/Los_Angeles")).toBe("2026-11-27");
    expect(rowDay("2026-11-27T20:00:00-08:00", zone)).toBe("2026-11-28");
    expect(rowDay("2026-11-27T20:00-0800", "UTC")).toBe("2026-11-28");
    expect(rowDay(Date.parse("2026-11-27T12:00:00Z"), zone)).toBe("2026-11-28");
    expect(rowDay(Date.parse("2026-11-27T12:00:00Z"), "UTC")).toBe("2026-11-27");
  });

  it("an ISO datetime without an offset is already local: its date part", () => {
    expect(rowDay("2026-11-27T23:30:00", zone)).toBe("2026-11-27");
    expect(rowDay("2026-11-27 06:00", "America/Los_Angeles")).toBe("2026-11-27");
  });

  it("anything else names no day", () => {
    for (const value of ["tomorrow", "2026-02-30", "2026-13-01", "27/11/2026", "2026-11-27T25:00:00Z", "", null, true, {}, ["2026-11-27"], Number.NaN, 1e20, undefined]) {
      expect(rowDay(value, zone)).toBeNull();
    }
  });
});

describe("addDays", () => {
  it("moves across months, years and leap days", () => {
    expect(addDays("2026-11-28", -1)).toBe("2026-11-27");
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
    expect(addDays("2028-03-01", -1)).toBe("2028-02-29");
    expect(addDays("2027-03-01", -1)).toBe("2027-02-28");
    expect(addDays("0050-01-01", 0)).toBe("0050-01-01");
  });

  it("answers null past the calendar's reach", () => {
    expect(addDays("2026-11-27", 1e9)).toBeNull();
    expect(addDays("2026-11-27", -1e12)).toBeNull();
  });
});
