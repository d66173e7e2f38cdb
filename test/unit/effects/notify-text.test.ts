// The words a notification goes out with, apart from any sending: one mail as itself or a
// digest listing several (the HTML twin escaping every value from a row, the subject one
// line), the push that never carries row data, and which submitter addresses count.
import { describe, expect, it } from "vitest";
import { notificationMail } from "../../../src/mail/notify-templates";
import { pushFor } from "../../../src/effects/notify/digests";
import { submitterAddress } from "../../../src/effects/notify/recipients";

const APP = { name: "Tea <Club>", url: "https://tea.apps.example.com/" };

describe("notificationMail", () => {
  it("sends one notification as itself, its subject on one line and every value escaped in the HTML", () => {
    const mail = notificationMail("a@example.com", APP, [{ subject: "New:\r\n<script>", body: "Line 1\n<img src=x onerror=alert(1)>", url: "https://tea.apps.example.com/t?a=1&b=2" }], true);
    expect(mail.subject).toBe("New: <script>");
    expect(mail.text).toBe(
      "Line 1\n<img src=x onerror=alert(1)>\n\nOpen: https://tea.apps.example.com/t?a=1&b=2\n\n--\n"
      + 'You get this mail because the app "Tea <Club>" notifies you of changes to its data.\nhttps://tea.apps.example.com/\n',
    );
    expect(mail.html).not.toMatch(/<img|<script|<Club>/);
    expect(mail.html).toContain("Line 1<br>&lt;img src=x onerror=alert(1)&gt;");
    expect(mail.html).toContain('href="https://tea.apps.example.com/t?a=1&amp;b=2"');
  });

  it("lists several as one digest, and tells a submitter why the mail came", () => {
    const mail = notificationMail("s@example.com", APP, [
      { subject: "One", body: "first", url: null },
      { subject: "Two", body: "second", url: null },
    ], false);
    expect(mail.subject).toBe("2 notifications from Tea <Club>");
    expect(mail.text).toContain("* One\nfirst\n\n* Two\nsecond");
    expect(mail.text).toContain('this address was entered in the app "Tea <Club>"');
    expect(mail.html).toContain("<li><p><strong>One</strong><br>first</p></li><li><p><strong>Two</strong><br>second</p></li>");
  });
});

describe("pushFor", () => {
  it("names the app and the collections, keeps a shared link, and nothing from the rows", () => {
    expect(pushFor("Tea", [{ collection: "orders", op: "create", link: "/orders" }])).toEqual({ title: "Tea", body: "Something new in orders", link: "/orders" });
    expect(pushFor("Tea", [{ collection: "orders", op: "update", link: null }])).toEqual({ title: "Tea", body: "A change in orders", link: null });
    expect(pushFor("Tea", [
      { collection: "orders", op: "create", link: "/orders" }, { collection: "stock", op: "update", link: "/stock" }, { collection: "orders", op: "update", link: "/orders" },
    ])).toEqual({ title: "Tea", body: "3 changes in orders, stock", link: null });
  });
});

describe("submitterAddress", () => {
  it("takes a plausible address, trimmed and lower-cased; anything else is none", () => {
    expect(submitterAddress("  Ann.Lee+tea@Example.COM ")).toBe("ann.lee+tea@example.com");
    for (const value of ["not an address", "a@b", "@example.com", "a@@example.com", "a b@example.com", 42, null, undefined, `${"x".repeat(250)}@example.com`]) {
      expect(submitterAddress(value), String(value)).toBeNull();
    }
  });
});
