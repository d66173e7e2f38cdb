// The template verbs of publishing and operator review, gathered for the registry's
// `template` noun (installs and upgrades have their own verbs beside these).
import type { Command } from "../types.ts";
import { templatePublish } from "./publish.ts";
import { templateUnpublish } from "./unpublish.ts";
import { templateListPending } from "./list-pending.ts";
import { templateShow } from "./show.ts";
import { templateApprove } from "./approve.ts";
import { templateReject } from "./reject.ts";

export const TEMPLATE_PUBLISHING_VERBS: Command[] = [templatePublish, templateUnpublish, templateListPending, templateShow, templateApprove, templateReject];
