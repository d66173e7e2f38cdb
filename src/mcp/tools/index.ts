/**
 * The whole tool surface of WIRE-MCP §2, in its order: 26 tools.
 */
import type { ToolDef } from "../define";
import { deployTool } from "./deploy";
import { rowTools } from "./rows";
import { appsTool } from "./apps";
import { accessTools } from "./access";
import { integrationTools } from "./integrations";
import { attachmentsTool } from "./attachments";
import { accountTools } from "./account";
import { communityTools } from "./community";
import { skillTool } from "./skill";

export const TOOLS: readonly ToolDef[] = [
  deployTool, ...rowTools, appsTool, ...accessTools, ...integrationTools, attachmentsTool, ...accountTools, ...communityTools, skillTool,
];
