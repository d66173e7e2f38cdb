// Local state of the CLI, all in one directory, ${XDG_CONFIG_HOME:-~/.config}/service:
// config.json (profiles), pending-device.json (a parked `agent register --start`) and
// skill-version.json (the skill-document version the agent last read). Files hold API
// keys or device codes, so the directory is 0700 and every file 0600, written atomically.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { CliError } from "./errors.ts";

export interface Profile {
  url?: string;
  api_key?: string;
}

export interface ConfigFile {
  current_profile: string | null;
  profiles: Record<string, Profile>;
}

export interface PendingDevice {
  device_code: string;
  user_code: string;
  verification_uri_complete: string;
  url: string;
  name: string;
  profile: string;
  expires_at: string;
}

export interface SkillCache {
  /** Keyed by relay URL: the version of the skill document last read from that relay. */
  relays: Record<string, { version: string; read_at: string; checked_at: string }>;
}

export const PROFILE_NAME = /^[A-Za-z0-9_-]{1,32}$/;

export class ConfigStore {
  readonly dir: string;

  constructor(env: NodeJS.ProcessEnv) {
    const base = env.XDG_CONFIG_HOME?.trim() ? env.XDG_CONFIG_HOME : path.join(env.HOME?.trim() ? env.HOME : homedir(), ".config");
    this.dir = path.join(base, "service");
  }

  get configPath(): string {
    return path.join(this.dir, "config.json");
  }

  get pendingPath(): string {
    return path.join(this.dir, "pending-device.json");
  }

  get skillCachePath(): string {
    return path.join(this.dir, "skill-version.json");
  }

  readConfig(): ConfigFile {
    const raw = this.readJson(this.configPath);
    if (raw === undefined) return { current_profile: null, profiles: {} };
    if (!isObject(raw)) throw this.corrupt(this.configPath, "is not a JSON object");
    const profiles: Record<string, Profile> = {};
    if (raw.profiles !== undefined) {
      if (!isObject(raw.profiles)) throw this.corrupt(this.configPath, "has a `profiles` value that is not an object");
      for (const [name, value] of Object.entries(raw.profiles)) {
        if (!isObject(value)) throw this.corrupt(this.configPath, `has a profile ${JSON.stringify(name)} that is not an object`);
        const profile: Profile = {};
        if (typeof value.url === "string") profile.url = value.url;
        if (typeof value.api_key === "string") profile.api_key = value.api_key;
        profiles[name] = profile;
      }
    }
    const current = typeof raw.current_profile === "string" ? raw.current_profile : null;
    return { current_profile: current, profiles };
  }

  writeConfig(config: ConfigFile): void {
    this.writeJson(this.configPath, { current_profile: config.current_profile, profiles: config.profiles });
  }

  readPending(): PendingDevice | null {
    const raw = this.readJson(this.pendingPath);
    if (raw === undefined) return null;
    if (!isObject(raw) || typeof raw.device_code !== "string" || typeof raw.url !== "string" || typeof raw.expires_at !== "string") {
      throw this.corrupt(this.pendingPath, "is not a parked device registration");
    }
    return raw as unknown as PendingDevice;
  }

  writePending(pending: PendingDevice): void {
    this.writeJson(this.pendingPath, pending);
  }

  clearPending(): void {
    rmSync(this.pendingPath, { force: true });
  }

  /** Never throws: a broken cache only disables the freshness warning. */
  readSkillCache(): SkillCache {
    try {
      const raw = this.readJson(this.skillCachePath);
      if (isObject(raw) && isObject(raw.relays)) return raw as unknown as SkillCache;
    } catch {
      /* ignored on purpose */
    }
    return { relays: {} };
  }

  writeSkillCache(cache: SkillCache): void {
    this.writeJson(this.skillCachePath, cache);
  }

  private readJson(file: string): unknown {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new CliError("config_error", `Cannot read ${file}: ${(err as Error).message}`, { hint: "Check the file's permissions." });
    }
    try {
      return JSON.parse(text);
    } catch {
      throw this.corrupt(file, "is not valid JSON");
    }
  }

  private writeJson(file: string, value: unknown): void {
    try {
      if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, file);
    } catch (err) {
      throw new CliError("config_error", `Cannot write ${file}: ${(err as Error).message}`, { hint: "Check that the config directory is writable." });
    }
  }

  private corrupt(file: string, what: string): CliError {
    return new CliError("config_error", `${file} ${what}.`, { hint: "Fix the file by hand or delete it (you will need to register or set-key again)." });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
