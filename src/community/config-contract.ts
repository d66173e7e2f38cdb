/**
 * The config contract of a template (WIRE §2.10) and the check of an installer's answers
 * against it. Pure: it reads a snapshot's published setup steps and manifest and answers
 * the contract's shape, or the answers to store in the settings row, or one catalogue
 * error naming the offending key. Nothing here touches storage, so an install refuses bad
 * answers before it creates anything.
 */
import { RelayError } from "../errors";
import type { SetupStep } from "./snapshots";

export interface ConfigStep {
  key: string;
  kind: "config" | "upload";
  label: string;
  description?: string;
  required: boolean;
  secret: boolean;
  choices?: string[];
  default?: string;
  value_hint?: string;
}

export interface ConnectStep {
  label: string;
  description?: string;
  ingest_rule: string;
  collection: string | null;
  mode: "append" | "upsert" | null;
}

/** The settings row an install writes its answers into (WIRE §5.1 `settingsCollection`). */
export const INSTALL_CONFIG_KEY = "install-config";
/** The longest answer one step takes. */
export const MAX_ANSWER_CHARS = 2000;

/** A config step published without a key is answered under `step_<n>` (its 1-based place among the steps). */
export function stepKey(step: SetupStep, index: number): string {
  return step.key ?? `step_${index + 1}`;
}

export function configSteps(steps: SetupStep[]): ConfigStep[] {
  const out: ConfigStep[] = [];
  steps.forEach((step, index) => {
    if (step.kind !== "config" && step.kind !== "upload") return;
    out.push({
      key: stepKey(step, index), kind: step.kind, label: step.label,
      ...(step.description !== undefined ? { description: step.description } : {}),
      required: step.required ?? false, secret: step.secret ?? false,
      ...(step.choices !== undefined ? { choices: [...step.choices] } : {}),
      ...(step.default !== undefined ? { default: step.default } : {}),
      ...(step.valueHint !== undefined ? { value_hint: step.valueHint } : {}),
    });
  });
  return out;
}

interface IngestEntry {
  name?: unknown;
  collection?: unknown;
  mode?: unknown;
}

/** Connect steps, each with the collection and mode of the inbound hook it names (null when the manifest has none by that name). */
export function connectSteps(steps: SetupStep[], manifest: Record<string, unknown>): ConnectStep[] {
  const hooks = Array.isArray(manifest.ingest) ? (manifest.ingest as IngestEntry[]) : [];
  return steps.filter((step) => step.kind === "connect").map((step) => {
    const rule = step.ingestRule ?? "";
    const hook = hooks.find((h) => h && h.name === rule);
    return {
      label: step.label,
      ...(step.description !== undefined ? { description: step.description } : {}),
      ingest_rule: rule,
      collection: typeof hook?.collection === "string" ? hook.collection : null,
      mode: hook ? (hook.mode === "upsert" ? "upsert" : "append") : null,
    };
  });
}

export interface CheckedAnswers {
  /** Every answered or defaulted step's value, keyed by step key: the settings row's data. */
  values: Record<string, string>;
  /** The attachment ids answered to upload steps, with their step keys. */
  uploads: { key: string; attachmentId: string }[];
}

function refuse(message: string, key: string, extra: Record<string, unknown> = {}): never {
  throw new RelayError("invalid_request", message, { field: `config.${key}`, ...extra });
}

/**
 * Checks `answers` against the steps: every key must be a step's, every value a string
 * within MAX_ANSWER_CHARS, a value with choices one of them, a required step answered or
 * defaulted. An upload answer is an attachment id; whose it is, the shell checks.
 */
export function checkAnswers(steps: ConfigStep[], answers: Record<string, string>): CheckedAnswers {
  const byKey = new Map(steps.map((step) => [step.key, step]));
  for (const key of Object.keys(answers)) {
    if (!byKey.has(key)) refuse(`"${key.slice(0, 64)}" is not a config step of this template.`, key.slice(0, 64), { allowed: [...byKey.keys()] });
  }
  const values: Record<string, string> = {};
  const uploads: CheckedAnswers["uploads"] = [];
  for (const step of steps) {
    const given = Object.hasOwn(answers, step.key) ? answers[step.key] : undefined;
    const value = given ?? (step.kind === "config" ? step.default : undefined);
    if (value === undefined || value === "") {
      if (step.required) refuse(`Config step "${step.key}" (${step.label}) is required.`, step.key);
      continue;
    }
    if (value.length > MAX_ANSWER_CHARS) refuse(`The answer to "${step.key}" is ${value.length} characters; at most ${MAX_ANSWER_CHARS}.`, step.key, { limit: MAX_ANSWER_CHARS });
    if (step.choices && !step.choices.includes(value)) refuse(`"${value.slice(0, 80)}" is not one of the choices of "${step.key}".`, step.key, { choices: step.choices });
    if (step.kind === "upload") uploads.push({ key: step.key, attachmentId: value });
    values[step.key] = value;
  }
  return { values, uploads };
}
