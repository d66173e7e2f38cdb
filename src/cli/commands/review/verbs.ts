// The `review` noun's verbs in help order, for the registry.
import type { Command } from "../types.ts";
import { reviewCreate } from "./create.ts";
import { reviewRespond } from "./respond.ts";
import { reviewReport } from "./report.ts";
import { reviewRemove, reviewUnhold } from "./moderate.ts";

export const REVIEW_VERBS: Command[] = [reviewCreate, reviewRespond, reviewReport, reviewRemove, reviewUnhold];
