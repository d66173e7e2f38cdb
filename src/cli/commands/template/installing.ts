// The template verbs of installing and upgrading, gathered for the registry's `template`
// noun (beside the publishing verbs of publishing.ts).
import type { Command } from "../types.ts";
import { templateConfigContract } from "./config-contract.ts";
import { templateInstall } from "./install.ts";
import { templateRevert, templateUpgrade, templateUpgradeCheck } from "./upgrade.ts";

export const TEMPLATE_INSTALL_VERBS: Command[] = [templateConfigContract, templateInstall, templateUpgradeCheck, templateUpgrade, templateRevert];
