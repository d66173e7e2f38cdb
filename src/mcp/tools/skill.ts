/**
 * `get_skill` (WIRE-MCP §2.26): the MCP guide, rendered in process (the hosted seam of
 * §1.6), or only its version.
 */
import * as z from "zod";
import { mcpGuideMarkdown, MCP_GUIDE_VERSION } from "../../skill/mcp-guide";
import { defineTool, hints, type ToolDef } from "../define";

export const skillTool: ToolDef = defineTool({
  name: "get_skill", annotations: hints("Get Skill Guide", "T", "-", "-", "F"),
  description: "The relay's usage guide for MCP clients (markdown), or with version_only: true just { version } to see whether the copy you read is current.",
  input: z.strictObject({ version_only: z.boolean().optional() }),
  run: async (args) => (args.version_only === true ? { version: MCP_GUIDE_VERSION } : mcpGuideMarkdown()),
});
