// Reads a deploy package from disk into the parts of a deploy body (spec A "Deploy
// package", spec C deploy, WIRE §2.2 Asset rules):
// - directory form: index.html, manifest.json and an optional assets/ folder walked
//   recursively (nested folders kept, dot-prefixed entries skipped); anything else next
//   to index.html is left behind and reported;
// - single-file form: one .html file, its manifest from --manifest or a manifest.json
//   beside it;
// - --asset <local>=<app-path> adds a file from anywhere and wins over a directory asset
//   with the same app path;
// - a file of 1 MB or more is not read here: it is named by its local path, for the
//   deploy command to upload as an attachment first (see uploader.ts).
// A part the package does not provide stays undefined, so a redeploy carries the live one
// forward; an assets/ folder that exists but is empty yields [] (clear the asset set).
// Every refusal is a local `invalid_args` that names the offending file.
import { readdirSync, readFileSync, realpathSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { invalidArgs } from "./errors.ts";
import { PRESIGN_FROM_BYTES } from "./uploader.ts";

/** Client-side copy of the relay's MAX_APP_ASSETS. */
export const MAX_ASSETS = 50;
/** Client-side copy of the relay's MAX_BLOB_BYTES: the most one inline asset may hold. */
export const MAX_ASSET_BYTES = 5_000_000;
/** Types a browser could execute or render as a page; they belong inline in index.html. */
export const REFUSED_EXTENSIONS = new Set(["js", "mjs", "cjs", "jsx", "ts", "tsx", "css", "svg", "html", "htm", "xhtml"]);
/** The only types whose `mime` the relay honours (they have no magic bytes to sniff). */
const DECLARED_MIME: Record<string, string> = {
  txt: "text/plain",
  csv: "text/csv",
  md: "text/markdown",
  json: "application/json",
  zip: "application/zip",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

export const DOCUMENT_NAME = "index.html";
export const MANIFEST_NAME = "manifest.json";
export const ASSETS_DIR = "assets";

export interface InlineAsset {
  path: string;
  content_base64: string;
  mime?: string;
}

/** A file of PRESIGN_FROM_BYTES or more: uploaded as an attachment, then sent as `{ path, attachment_id }`. */
export interface UploadAsset {
  path: string;
  local: string;
}

export type PackageAsset = InlineAsset | UploadAsset;

export interface DeployPackage {
  /** "directory" or "file": which form the target took. */
  form: "directory" | "file";
  html?: string;
  manifest?: Record<string, unknown>;
  /** Undefined: no assets/ folder and no --asset (a redeploy keeps the live set). */
  assets?: PackageAsset[];
  /** Whether an assets/ folder was read (without one, `assets` holds only --asset files). */
  assetsFolder: boolean;
  /** Things the user should know, for `warning:` lines on stderr. */
  warnings: string[];
}

export interface PackageOptions {
  /** The dir or file argument (default: the current directory). */
  target: string;
  /** --manifest: a path, or inline JSON when it starts with `{`. */
  manifest?: string;
  /** Every --asset value, `<local>=<app-path>`. */
  assetFlags: string[];
  /** For invalid_args hints. */
  command: string;
  /** Where relative paths start (process.cwd() in the CLI). */
  cwd: string;
}

function statOrNull(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}

/** The extension the relay judges a path by: after the last dot of the last segment. */
export function extensionOf(appPath: string): string {
  const name = appPath.slice(appPath.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

function displayPath(file: string, cwd: string): string {
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

export function readPackage(options: PackageOptions): DeployPackage {
  const { command, cwd } = options;
  const target = path.resolve(cwd, options.target);
  const stat = statOrNull(target);
  if (!stat) throw invalidArgs(`Nothing to deploy at ${options.target}: no such file or directory.`, command);
  const pkg: DeployPackage = { form: stat.isDirectory() ? "directory" : "file", assetsFolder: false, warnings: [] };
  const flagManifest = options.manifest === undefined ? undefined : readManifestFlag(options.manifest, command, cwd);
  const extras = options.assetFlags.map((value) => parseAssetFlag(value, command, cwd));
  // Files the flags ship from beside index.html are deployed, not stray.
  const shipped = new Set(extras.map((e) => realpathSync(e.local)));
  if (flagManifest !== undefined && !options.manifest!.trimStart().startsWith("{")) shipped.add(safeRealpath(path.resolve(cwd, options.manifest!)));

  let dirAssets: PackageAsset[] | undefined;
  if (stat.isDirectory()) {
    const documentFile = path.join(target, DOCUMENT_NAME);
    const manifestFile = path.join(target, MANIFEST_NAME);
    const assetsDir = path.join(target, ASSETS_DIR);
    if (statOrNull(documentFile)?.isFile()) pkg.html = readFileSync(documentFile, "utf8");
    if (flagManifest !== undefined) {
      pkg.manifest = flagManifest;
      if (statOrNull(manifestFile)?.isFile()) pkg.warnings.push(`${displayPath(manifestFile, cwd)} is not deployed: --manifest was given and wins.`);
    } else if (statOrNull(manifestFile)?.isFile()) {
      pkg.manifest = parseManifestText(readFileSync(manifestFile, "utf8"), displayPath(manifestFile, cwd), command);
    }
    if (statOrNull(assetsDir)?.isDirectory()) {
      dirAssets = walkAssets(assetsDir, command, cwd);
      pkg.assetsFolder = true;
    }

    for (const entry of readdirSync(target, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".") || entry.name === DOCUMENT_NAME || entry.name === MANIFEST_NAME) continue;
      const full = path.join(target, entry.name);
      const isDir = statOrNull(full)?.isDirectory() ?? false;
      if (entry.name === ASSETS_DIR && isDir) continue;
      if (shipped.has(safeRealpath(full))) continue;
      pkg.warnings.push(
        `${displayPath(full, cwd)}${isDir ? "/" : ""} is next to ${DOCUMENT_NAME} but is not deployed (only ${DOCUMENT_NAME}, ${MANIFEST_NAME} and ${ASSETS_DIR}/ are); ` +
          "move it under assets/ or pass --asset <local>=<app-path>.",
      );
    }
  } else {
    if (!/\.x?html?$/i.test(target)) {
      throw invalidArgs(`${options.target} is neither a directory nor an .html file; deploy a directory holding index.html and manifest.json, or one .html file.`, command);
    }
    pkg.html = readFileSync(target, "utf8");
    const beside = path.join(path.dirname(target), MANIFEST_NAME);
    if (flagManifest !== undefined) pkg.manifest = flagManifest;
    else if (statOrNull(beside)?.isFile()) pkg.manifest = parseManifestText(readFileSync(beside, "utf8"), displayPath(beside, cwd), command);
    const assetsBeside = path.join(path.dirname(target), ASSETS_DIR);
    if (statOrNull(assetsBeside)?.isDirectory()) {
      pkg.warnings.push(`${displayPath(assetsBeside, cwd)}/ is not deployed with a single file; deploy the directory instead, or pass --asset.`);
    }
  }

  if (dirAssets !== undefined || extras.length > 0) {
    const byPath = new Map<string, PackageAsset>();
    for (const asset of dirAssets ?? []) byPath.set(asset.path, asset);
    for (const extra of extras) byPath.set(extra.appPath, packageAsset(extra.local, extra.appPath, command, cwd));
    const assets = [...byPath.values()];
    if (assets.length > MAX_ASSETS) {
      throw invalidArgs(`The package has ${assets.length} assets; at most ${MAX_ASSETS} may be deployed.`, command, { limit: MAX_ASSETS, count: assets.length });
    }
    pkg.assets = assets;
  }
  return pkg;
}

function safeRealpath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** Every file under assets/ (dot entries skipped), as `assets/<relative path>`. */
function walkAssets(assetsDir: string, command: string, cwd: string): PackageAsset[] {
  const found: PackageAsset[] = [];
  const visited = new Set<string>();
  const walk = (dir: string, prefix: string) => {
    const real = safeRealpath(dir);
    if (visited.has(real)) return; // a symlink loop
    visited.add(real);
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".")) continue;
      const full = path.join(dir, entry.name);
      const stat = statOrNull(full);
      const appPath = `${prefix}/${entry.name}`;
      if (stat?.isDirectory()) walk(full, appPath);
      else if (stat?.isFile()) {
        found.push(packageAsset(full, appPath, command, cwd));
        if (found.length > MAX_ASSETS) {
          throw invalidArgs(`${displayPath(assetsDir, cwd)}/ holds more than ${MAX_ASSETS} files; at most ${MAX_ASSETS} assets may be deployed.`, command, { limit: MAX_ASSETS });
        }
      }
    }
  };
  walk(assetsDir, ASSETS_DIR);
  return found;
}

function packageAsset(local: string, appPath: string, command: string, cwd: string): PackageAsset {
  const shown = displayPath(local, cwd);
  const ext = extensionOf(appPath);
  if (REFUSED_EXTENSIONS.has(ext)) {
    throw invalidArgs(
      `Refusing to deploy ${shown} as "${appPath}": .${ext} files cannot be assets (scripts, styles, SVG and HTML belong inline in ${DOCUMENT_NAME}).`,
      command,
      { file: shown, path: appPath },
    );
  }
  const size = statSync(local).size;
  if (size > MAX_ASSET_BYTES) {
    throw invalidArgs(`${shown} is ${size} bytes; an asset may be at most ${MAX_ASSET_BYTES} bytes.`, command, { file: shown, limit: MAX_ASSET_BYTES });
  }
  if (size >= PRESIGN_FROM_BYTES) return { path: appPath, local };
  const asset: InlineAsset = { path: appPath, content_base64: readFileSync(local).toString("base64") };
  const mime = DECLARED_MIME[ext];
  if (mime) asset.mime = mime;
  return asset;
}

function parseAssetFlag(value: string, command: string, cwd: string): { local: string; appPath: string } {
  const eq = value.lastIndexOf("=");
  if (eq <= 0 || eq === value.length - 1) {
    throw invalidArgs(`--asset ${JSON.stringify(value)} is not <local>=<app-path>, e.g. --asset ./photo.jpg=images/photo.jpg.`, command, { flag: "--asset" });
  }
  const local = path.resolve(cwd, value.slice(0, eq));
  const appPath = value.slice(eq + 1).replace(/^\/+/, "");
  if (!appPath) throw invalidArgs(`--asset ${JSON.stringify(value)} has an empty app path.`, command, { flag: "--asset" });
  if (!statOrNull(local)?.isFile()) throw invalidArgs(`--asset ${JSON.stringify(value)}: ${value.slice(0, eq)} is not a file.`, command, { flag: "--asset" });
  return { local, appPath };
}

function readManifestFlag(value: string, command: string, cwd: string): Record<string, unknown> {
  if (value.trimStart().startsWith("{")) return parseManifestText(value, "--manifest", command);
  const file = path.resolve(cwd, value);
  if (!statOrNull(file)?.isFile()) throw invalidArgs(`--manifest ${value}: no such file (pass a path or inline JSON).`, command, { flag: "--manifest" });
  return parseManifestText(readFileSync(file, "utf8"), displayPath(file, cwd), command);
}

function parseManifestText(text: string, source: string, command: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw invalidArgs(`${source} is not valid JSON: ${err instanceof Error ? err.message : String(err)}.`, command);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw invalidArgs(`${source} must hold a JSON object.`, command);
  return parsed as Record<string, unknown>;
}
