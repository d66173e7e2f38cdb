// The skill's reference sections (WIRE §2.11): the list at /skills/service/references
// (slug, title, summary, url, version for every topic), each section's raw markdown at
// <slug>.md stamped with the skill document's version, no key and no CLI version needed;
// an unknown section is a 404 catalogue error; the skill document links every section;
// every relay path a section names answers; the MCP guide inlines them all; and the hints
// of the areas a section explains point at it, on the catalogue and on a real refusal.
import { describe, expect, it } from "vitest";
import manifestRef from "../../../src/skill/references/manifest.md";
import pageScriptRef from "../../../src/skill/references/page-script.md";
import webhooksRef from "../../../src/skill/references/webhooks.md";
import ingestRef from "../../../src/skill/references/ingest.md";
import attachmentsRef from "../../../src/skill/references/attachments.md";
import assetsRef from "../../../src/skill/references/assets.md";
import agentTasksRef from "../../../src/skill/references/agent-tasks.md";
import notifyTargetsRef from "../../../src/skill/references/notify-targets.md";
import registeringRef from "../../../src/skill/references/registering.md";
import communityRef from "../../../src/skill/references/community-templates.md";
import { catalogue, type ErrorCode } from "../../../src/errors";
import { SKILL_MD, SKILL_VERSION } from "../../../src/skill/skill-doc";
import { API, call, expectError, json, register } from "../helpers";
import { expectReadable, originPaths } from "./readable";

const SECTIONS: Record<string, string> = {
  manifest: manifestRef, "page-script": pageScriptRef, webhooks: webhooksRef, ingest: ingestRef, attachments: attachmentsRef,
  assets: assetsRef, "agent-tasks": agentTasksRef, "notify-targets": notifyTargetsRef, registering: registeringRef, "community-templates": communityRef,
};

interface Entry { slug: string; title: string; summary: string; url: string; version: string }

describe("the reference sections", () => {
  it("are listed with slug, title, summary, url and the skill's version, without a key or a CLI version", async () => {
    const res = await call("/skills/service/references", { cliVersion: "0.0.1" });
    const body = await json<{ sections: Entry[] }>(res, 200);
    expect(Object.keys(body)).toEqual(["sections"]);
    expect(body.sections.map((s) => s.slug)).toEqual(Object.keys(SECTIONS));
    const { version } = await json<{ version: string }>(await call("/skills/service/SKILL.md/version"), 200);
    expect(version).toBe(SKILL_VERSION);
    for (const section of body.sections) {
      expect(Object.keys(section).sort()).toEqual(["slug", "summary", "title", "url", "version"]);
      expect(section.url).toBe(`${API}/skills/service/references/${section.slug}.md`);
      expect(section.version).toBe(version);
      expect(section.title.length).toBeGreaterThan(0);
      expect(section.summary.length).toBeGreaterThan(0);
    }
  });

  it("each answers its markdown at <slug>.md, stamped with its slug and the skill's version", async () => {
    for (const [slug, markdown] of Object.entries(SECTIONS)) {
      const res = await call(`/skills/service/references/${slug}.md`, { cliVersion: "0.0.1" });
      expect(res.status, slug).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      const text = await res.text();
      expect(text).toBe(`<!-- service skill reference ${slug} v${SKILL_VERSION} -->\n${markdown}`);
      expect(markdown).toMatch(/^# Reference: /);
      // The stamp is not the skill document's own marker, so a client that records the guide's version from it is not misled.
      expect(text).not.toMatch(/<!--\s*service skill v/);
    }
  });

  it("an unknown section, or one asked for without .md, is skill_reference_not_found; other verbs are 405", async () => {
    for (const path of ["/skills/service/references/nope.md", "/skills/service/references/webhooks", "/skills/service/references/SKILL.md", "/skills/service/references/webhooks.md.md"]) {
      const e = await expectError(await call(path), 404, "skill_reference_not_found");
      expect(e.details?.sections).toEqual(Object.keys(SECTIONS).map((slug) => `${slug}.md`));
      expect(e.hint).toContain("/skills/service/references");
    }
    await expectError(await call("/skills/service/references", { method: "POST", json: {} }), 405, "method_not_allowed");
    await expectError(await call("/skills/service/references/webhooks.md", { method: "DELETE" }), 405, "method_not_allowed");
  });

  it("every relay page a section names answers, with the anchor it names", async () => {
    for (const [slug, markdown] of Object.entries(SECTIONS)) {
      const paths = originPaths(markdown).filter((p) => /^\/(docs|skills|v1\/openapi)/.test(p));
      for (const path of new Set(paths)) await expectReadable(path, `reference ${slug}`);
    }
  });
});

describe("links to the sections", () => {
  it("the skill document names every section's address", () => {
    for (const slug of Object.keys(SECTIONS)) expect(SKILL_MD).toContain(`/skills/service/references/${slug}.md`);
    expect(SKILL_MD).toContain("`/skills/service/references`");
  });

  it("the hints of webhook, ingest, attachment, agent-task, notify and registration errors point at their section", () => {
    const expected: Array<[ErrorCode, string]> = [
      ["webhook_invalid", "webhooks"], ["ingest_invalid", "ingest"], ["ingest_not_found", "ingest"], ["ingest_signature_invalid", "ingest"],
      ["attachment_not_found", "attachments"], ["attachment_ref_not_accessible", "attachments"], ["attachment_size_exceeded", "attachments"],
      ["attachment_fetch_failed", "attachments"], ["mime_mismatch", "attachments"], ["agent_task_invalid", "agent-tasks"],
      ["task_not_found", "agent-tasks"], ["task_not_leased", "agent-tasks"], ["notify_invalid", "notify-targets"],
      ["notify_channel_not_enabled", "notify-targets"], ["agent_not_claimed", "registering"], ["claim_code_invalid", "registering"],
    ];
    for (const [code, slug] of expected) expect(catalogue[code].hint, code).toContain(`/skills/service/references/${slug}.md`);
  });

  it("the MCP guide inlines every section after the skill document (an MCP client cannot open them on demand)", async () => {
    const res = await call("/skills/service/MCP.md");
    const guide = await res.text();
    expect(guide).toContain(SKILL_MD);
    let from = guide.indexOf(SKILL_MD) + SKILL_MD.length;
    for (const [slug, markdown] of Object.entries(SECTIONS)) {
      const at = guide.indexOf(`<!-- service skill reference ${slug} v${SKILL_VERSION} -->\n${markdown}`, from);
      expect(at, slug).toBeGreaterThan(0);
      from = at;
    }
  });

  it("a real refusal carries the section in its hint", async () => {
    const agent = await register("reference-hint");
    const e = await expectError(await call("/v1/attachments/att_doesnotexist0000", { key: agent.api_key }), 404, "attachment_not_found");
    expect(e.hint).toContain("/skills/service/references/attachments.md");
  });
});
