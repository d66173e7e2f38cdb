// Shared fixtures for the permission tests: manifests built with the real parseManifest,
// one principal of every kind the engine knows, and rows placed relative to a principal
// ("mine", "created", "edited", "assigned", "foreign").
import { parseManifest, type CompiledManifest } from "../../../src/manifest";
import { authorOf, type Author, type Principal, type RowContext } from "../../../src/permissions";

export const TASK_DEFS = {
  Task: {
    type: "object",
    properties: {
      title: { type: "string" },
      status: { type: "string" },
      assignee_id: { type: "string" },
      reviewer_id: { type: "string" },
      ref: { type: "string" },
      note: { type: "string" },
    },
  },
};

export const ROLES = {
  staff: { label: "Staff" },
  lead: { label: "Lead", includes: ["staff"] },
};

type Obj = Record<string, unknown>;

/** A manifest with collection `tasks` (over the Task schema) and an unrelated `other`. */
export function compile(tasks: Obj, ext: Obj = {}): CompiledManifest {
  const base: Obj = {
    schema: { $ref: "#/$defs/Task" },
    relations: { assignee: { field: "assignee_id", set: "caller" } },
    read: ["owner"],
    write: ["owner"],
    delete: ["owner"],
    ...tasks,
  };
  for (const k of Object.keys(base)) if (base[k] === undefined) delete base[k];
  return parseManifest({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: TASK_DEFS,
    "x-service-manifest": {
      app: { name: "Permission tests" },
      roles: ROLES,
      collections: { tasks: base, other: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
      ...ext,
    },
  });
}

const memoised = new Map<string, CompiledManifest>();
export function compileCached(tasks: Obj): CompiledManifest {
  const key = JSON.stringify(tasks);
  let m = memoised.get(key);
  if (!m) {
    m = compile(tasks);
    memoised.set(key, m);
  }
  return m;
}

export const ALL_OPS = ["read", "create", "update", "delete"] as const;

export const PRINCIPALS = {
  owner: { kind: "owner", humanId: "hum_owner" },
  agent: { kind: "agent", agentId: "agt_owner" },
  member: { kind: "member", humanId: "hum_plain", roles: [] },
  memberStaff: { kind: "member", humanId: "hum_staff", roles: ["staff"] },
  memberLead: { kind: "member", humanId: "hum_lead", roles: ["lead"] },
  grantStaff: { kind: "grant", grantId: "grt_staff", linkId: "grant_staff", role: "staff", pin: null },
  grantLead: { kind: "grant", grantId: "grt_lead", linkId: "grant_lead", role: "lead", pin: null },
  grantPinKeyIn: { kind: "grant", grantId: "grt_kin", linkId: "grant_kin", role: "staff", pin: { key: "row1" } },
  grantPinKeyOut: { kind: "grant", grantId: "grt_kout", linkId: "grant_kout", role: "staff", pin: { key: "elsewhere" } },
  grantPinWhereIn: { kind: "grant", grantId: "grt_win", linkId: "grant_win", role: "staff", pin: { where: [{ field: "status", op: "eq", value: "open" }] } },
  grantPinWhereOut: { kind: "grant", grantId: "grt_wout", linkId: "grant_wout", role: "staff", pin: { where: [{ field: "status", op: "eq", value: "closed" }] } },
  visitor: { kind: "visitor", visitorId: "vis_1", ip: "203.0.113.9" },
  anonymous: { kind: "anonymous", ip: "203.0.113.7" },
  credAll: { kind: "credential", credentialId: "crd_all", mode: "explicit", grants: [{ collection: "tasks", ops: [...ALL_OPS] }] },
  credRead: { kind: "credential", credentialId: "crd_read", mode: "explicit", grants: [{ collection: "tasks", ops: ["read"] }] },
  credNoOps: { kind: "credential", credentialId: "crd_none", mode: "explicit", grants: [{ collection: "tasks", ops: [] }] },
  credOther: { kind: "credential", credentialId: "crd_other", mode: "explicit", grants: [{ collection: "other", ops: [...ALL_OPS] }] },
  credOwn: { kind: "credential", credentialId: "crd_own", mode: "explicit", grants: [{ collection: "tasks", ops: [...ALL_OPS], scope: "own" }] },
  credFollowing: { kind: "credential", credentialId: "crd_follow", mode: "following", grants: [] },
  credFollowingCarve: { kind: "credential", credentialId: "crd_carve", mode: "following", grants: [{ collection: "tasks", ops: ["read"] }] },
  leaseWrite: { kind: "lease", taskId: "tsk_w", reads: [], writes: ["tasks"] },
  leaseRead: { kind: "lease", taskId: "tsk_r", reads: ["tasks"], writes: [] },
  leaseOther: { kind: "lease", taskId: "tsk_o", reads: ["other"], writes: ["other"] },
} satisfies Record<string, Principal>;

export type PrincipalName = keyof typeof PRINCIPALS;
export const PRINCIPAL_NAMES = Object.keys(PRINCIPALS) as PrincipalName[];

export const STRANGER: Author = { kind: "human", id: "hum_stranger" };

export type Variant = "mine" | "created" | "edited" | "assigned" | "foreign";
export const VARIANTS: Variant[] = ["mine", "created", "edited", "assigned", "foreign"];

/** Row `row1` (status open) placed relative to the principal: who created it, who wrote it last, who it names. */
export function rowFor(principal: Principal, variant: Variant, data: Record<string, unknown> = {}): RowContext {
  const me = authorOf(principal);
  const creator = variant === "mine" || variant === "created" ? me : STRANGER;
  const editor = variant === "mine" || variant === "edited" ? me : STRANGER;
  const assignee = variant === "mine" || variant === "assigned" ? me.id : STRANGER.id;
  return { key: "row1", creator, editor, data: { title: "t", status: "open", assignee_id: assignee, ...data } };
}

export function row(over: Partial<RowContext> & { data?: Record<string, unknown> } = {}): RowContext {
  return { key: "row1", creator: STRANGER, editor: STRANGER, ...over, data: { title: "t", status: "open", ...(over.data ?? {}) } };
}
