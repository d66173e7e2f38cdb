// Custom roles: names, built-ins never redeclared, includes (declared, acyclic, transitive).
import { describe, expect } from "vitest";
import { manifest, table, X } from "./helpers";

const R = `${X}.roles`;
const roles = (r: unknown) => manifest({ roles: r });

describe("roles", () => {
  table([
    { name: "roles with transitive includes", input: roles({ lead: { label: "Lead", includes: ["editor_role"] }, editor_role: { label: "Editor", includes: ["viewer"] }, viewer: { label: "Viewer", description: "Reads" } }), check: (m) => {
      expect(m.roles.lead.expands).toEqual(["editor_role", "lead", "viewer"]);
      expect(m.roles.viewer).toEqual({ label: "Viewer", description: "Reads", includes: [], expands: ["viewer"] });
    } },
    { name: "roles not a map", input: roles([]), code: "manifest_invalid", path: R },
    { name: "redeclares owner", input: roles({ owner: { label: "O" } }), code: "permission_role_invalid", path: `${R}.owner` },
    { name: "redeclares member", input: roles({ member: { label: "M" } }), code: "permission_role_invalid", path: `${R}.member` },
    { name: "redeclares anyone", input: roles({ anyone: { label: "A" } }), code: "permission_role_invalid", path: `${R}.anyone` },
    { name: "redeclares agent", input: roles({ agent: { label: "A" } }), code: "permission_role_invalid", path: `${R}.agent` },
    { name: "named creator", input: roles({ creator: { label: "C" } }), code: "permission_role_invalid", path: `${R}.creator` },
    { name: "bad name", input: roles({ Staff: { label: "S" } }), code: "permission_role_invalid", path: `${R}.Staff` },
    { name: "name with a colon", input: roles({ "a:b": { label: "S" } }), code: "permission_role_invalid", path: `${R}.a:b` },
    { name: "label missing", input: roles({ staff: {} }), code: "manifest_invalid", path: `${R}.staff.label` },
    { name: "unknown key", input: roles({ staff: { label: "S", color: "red" } }), code: "manifest_invalid", path: `${R}.staff.color` },
    { name: "includes a built-in", input: roles({ staff: { label: "S", includes: ["member"] } }), code: "permission_role_invalid", path: `${R}.staff.includes[0]` },
    { name: "includes an undeclared role", input: roles({ staff: { label: "S", includes: ["ghost"] } }), code: "permission_role_invalid", path: `${R}.staff.includes[0]` },
    { name: "includes itself", input: roles({ staff: { label: "S", includes: ["staff"] } }), code: "permission_role_invalid", path: `${R}.staff.includes[0]` },
    { name: "includes cycle", input: roles({ a: { label: "A", includes: ["b"] }, b: { label: "B", includes: ["c"] }, c: { label: "C", includes: ["a"] } }), code: "permission_role_invalid", path: `${R}.a.includes` },
    { name: "includes not a list", input: roles({ staff: { label: "S", includes: "viewer" } }), code: "permission_role_invalid", path: `${R}.staff.includes` },
  ]);
});
