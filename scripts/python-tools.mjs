/**
 * Runs a command (`npm test`'s Vitest, CI's Node 22 pass) with the Python tools the tests need,
 * `moto_server` and `cfn-lint`: from PATH when both are there; otherwise from the project's
 * virtual environment `.venv/`, made with `python3 -m venv` and filled with the versions pinned in
 * `requirements-test.txt` (again whenever that file changes). When they cannot be had, it fails
 * before the command starts, naming the step that failed and what to do. pip gives up on an
 * unreachable index after one retry of 15 s, and the whole install after 10 minutes.
 *
 *   node scripts/python-tools.mjs <command> [args...]
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, isAbsolute, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const REQUIREMENTS = join(ROOT, "requirements-test.txt");
const VENV = join(ROOT, ".venv");
const VENV_BIN = join(VENV, process.platform === "win32" ? "Scripts" : "bin");
/** The requirements' digest the environment was filled from. */
const STAMP = join(VENV, "requirements-test.sha256");
const TOOLS = ["moto_server", "cfn-lint"];
const INSTALL_TIMEOUT_MS = 10 * 60_000;

function fail(message) {
  console.error(`python-tools: ${message}`);
  process.exit(1);
}

function onPath(command) {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .some((dir) => dir !== "" && existsSync(join(dir, command)));
}

/** Runs one step of the install, its output on stderr; what went wrong, or undefined. */
function step(command, args) {
  const shown = [command, ...args]
    .map((part) => (isAbsolute(part) ? relative(ROOT, part) : part))
    .join(" ");
  const result = spawnSync(command, args, {
    stdio: ["ignore", 2, 2],
    timeout: INSTALL_TIMEOUT_MS,
  });
  if (result.error?.code === "ETIMEDOUT") {
    return `\`${shown}\` did not finish within ${INSTALL_TIMEOUT_MS / 60_000} minutes`;
  }
  if (result.error) return `\`${shown}\` could not run (${result.error.code ?? result.error})`;
  if (result.status !== 0) return `\`${shown}\` exited with ${result.status ?? result.signal}`;
  return undefined;
}

/** A Python 3.9 or newer on PATH. */
function python() {
  return ["python3", "python"].find(
    (command) =>
      onPath(command) &&
      spawnSync(command, ["-c", "import sys; sys.exit(sys.version_info < (3, 9))"]).status === 0,
  );
}

/** The directory to put first on PATH, or undefined when PATH has the tools already. */
function toolsDirectory() {
  const missing = TOOLS.filter((tool) => !onPath(tool));
  if (missing.length === 0) return undefined;
  const digest = createHash("sha256").update(readFileSync(REQUIREMENTS)).digest("hex");
  const filled = existsSync(STAMP) && readFileSync(STAMP, "utf8") === digest;
  if (filled && TOOLS.every((tool) => existsSync(join(VENV_BIN, tool)))) return VENV_BIN;

  const what = `${missing.join(" and ")} (Python tools the tests need) ${missing.length > 1 ? "are" : "is"} not on PATH`;
  const yourself =
    "install them yourself so that both are on PATH (`pip install -r requirements-test.txt`, Python 3.9 or newer), or make PyPI reachable, then run the tests again";
  console.error(`python-tools: ${what}; installing requirements-test.txt into .venv/`);
  const interpreter = python();
  if (!interpreter) fail(`${what}, and no Python 3.9 or newer is (python3); ${yourself}`);
  const problem =
    step(interpreter, ["-m", "venv", VENV]) ??
    step(join(VENV_BIN, "python"), [
      "-m",
      "pip",
      "install",
      "--disable-pip-version-check",
      "--timeout",
      "15",
      "--retries",
      "1",
      "-r",
      REQUIREMENTS,
    ]);
  if (problem) fail(`${what}, and installing them failed: ${problem}; ${yourself}`);
  writeFileSync(STAMP, digest);
  return VENV_BIN;
}

const [command, ...args] = process.argv.slice(2);
if (!command) fail("usage: node scripts/python-tools.mjs <command> [args...]");
const directory = toolsDirectory();
const env = directory
  ? { ...process.env, PATH: `${directory}${delimiter}${process.env.PATH ?? ""}`, VIRTUAL_ENV: VENV }
  : process.env;
const child = spawn(command, args, { stdio: "inherit", env });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => fail(`${command} could not start (${error.code ?? error})`));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
