#!/usr/bin/env node
// Builds the container image's filesystem without Docker, by carrying out the Dockerfile's own
// steps: each stage gets a directory standing for its root, COPY copies (from the build context
// or from an earlier stage), RUN runs in the stage's WORKDIR (build stages only), and the final
// stage's ENV, USER, ENTRYPOINT, CMD, HEALTHCHECK and LABELs are written to image.json beside a
// start.sh that runs the entrypoint the way the image would, with the image's absolute paths
// mapped into the directory.
//
//   node scripts/container-build.mjs [OUT_DIR]     (default: .build/container)
//   OUT_DIR/start.sh blackline                       (the image's `docker run IMAGE blackline`)
//
// What differs from `docker build`: the steps run with the Node.js and npm on PATH rather than
// the base image's (the script says so when the major versions differ), and `--chown` is
// not applied (this user owns everything here).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const context = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(context, ".build", "container"));
const MARKER = "image.json";

/** The Dockerfile as instructions: continuation lines joined, comments and blank lines dropped. */
function parseDockerfile(text) {
  const joined = text.replace(/\\\r?\n\s*/g, " ");
  return joined
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [, instruction, rest] = /^(\S+)\s*(.*)$/.exec(line);
      return { instruction: instruction.toUpperCase(), args: rest.trim() };
    });
}

/** `KEY=value KEY2="two words"` into an object. */
function parsePairs(text, vars) {
  const pairs = {};
  for (const [, key, quoted, bare] of text.matchAll(/([A-Za-z0-9_.-]+)=(?:"([^"]*)"|(\S+))/g)) {
    pairs[key] = substitute(quoted ?? bare, vars);
  }
  return pairs;
}

function substitute(text, vars) {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => vars[a ?? b] ?? "");
}

/** Splits `--flag=value` options off the front of COPY's arguments. */
function splitFlags(args) {
  const words = args.split(/\s+/);
  const flags = {};
  while (words[0]?.startsWith("--")) {
    const [name, value] = words.shift().slice(2).split("=");
    flags[name] = value;
  }
  return { flags, words };
}

function run(command, cwd, env) {
  console.log(`    $ ${command}`);
  const result = spawnSync("sh", ["-c", command], { cwd, env, stdio: "inherit" });
  if (result.status !== 0) {
    throw new Error(`RUN ${command} failed (exit ${result.status ?? result.signal})`);
  }
}

async function prepareOut() {
  if (existsSync(out)) {
    const entries = await readdir(out);
    if (entries.length > 0 && !entries.includes(MARKER)) {
      throw new Error(
        `${out} exists and is not an earlier container build; give an empty or new directory`,
      );
    }
    await rm(out, { recursive: true, force: true });
  }
  await mkdir(out, { recursive: true });
}

async function build() {
  const version = JSON.parse(await readFile(join(context, "package.json"), "utf8")).version;
  // As `npm run image` passes them to docker build.
  const buildArgs = { VERSION: version };
  const instructions = parseDockerfile(await readFile(join(context, "Dockerfile"), "utf8"));
  const froms = instructions.filter((i) => i.instruction === "FROM").length;
  const globalArgs = {};
  const stages = [];
  let stage;
  await prepareOut();
  const stagesDir = join(out, ".stages");

  for (const { instruction, args } of instructions) {
    const vars = { ...globalArgs, ...stage?.args };
    const inStage = (path) =>
      join(stage.root, path.startsWith("/") ? path : join(stage.workdir, path));
    switch (instruction) {
      case "ARG": {
        const [name, value = ""] = args.split("=");
        const given = buildArgs[name] ?? substitute(value, vars);
        if (stage) stage.args[name] = given;
        else globalArgs[name] = given;
        break;
      }
      case "FROM": {
        const [image, , name] = substitute(args, vars).split(/\s+/);
        const final = stages.length === froms - 1;
        const root = final ? out : join(stagesDir, name ?? String(stages.length));
        stage = {
          image,
          name,
          root,
          final,
          workdir: "/",
          env: {},
          args: {},
          labels: {},
          config: {},
        };
        stages.push(stage);
        await mkdir(root, { recursive: true });
        console.log(`FROM ${image}${name ? ` AS ${name}` : ""}: ${root}`);
        const major = /^node:(\d+)/.exec(image)?.[1];
        if (major && major !== process.versions.node.split(".")[0]) {
          console.log(
            `    note: the image has Node.js ${major}; these steps run with ${process.version}`,
          );
        }
        break;
      }
      case "WORKDIR":
        stage.workdir = substitute(args, vars);
        await mkdir(inStage("."), { recursive: true });
        break;
      case "ENV":
        Object.assign(stage.env, parsePairs(args, vars));
        break;
      case "LABEL":
        Object.assign(stage.labels, parsePairs(args, vars));
        break;
      case "COPY": {
        const { flags, words } = splitFlags(args);
        const dest = words.pop();
        const from = flags.from && stages.find((s) => s.name === flags.from);
        if (flags.from && !from) throw new Error(`COPY --from=${flags.from}: no such stage`);
        const target = inStage(dest);
        const intoDirectory = dest.endsWith("/") || words.length > 1;
        for (const source of words) {
          const path = from ? join(from.root, source) : join(context, source);
          const isDirectory = (await stat(path)).isDirectory();
          const destination = intoDirectory && !isDirectory ? join(target, basename(path)) : target;
          await mkdir(isDirectory ? destination : dirname(destination), { recursive: true });
          await cp(path, destination, { recursive: true, verbatimSymlinks: true });
        }
        console.log(`    COPY ${args}`);
        break;
      }
      case "RUN":
        if (stage.final) {
          throw new Error(
            `RUN in the final stage cannot be carried out here (${args}); do it in the build stage`,
          );
        }
        run(args, inStage("."), { ...process.env, ...stage.env });
        break;
      case "USER":
      case "VOLUME":
      case "EXPOSE":
      case "HEALTHCHECK":
      case "ENTRYPOINT":
      case "CMD":
        stage.config[instruction] = args;
        break;
      default:
        throw new Error(`the Dockerfile uses ${instruction}, which this script does not carry out`);
    }
  }

  const final = stages.at(-1);
  const json = (text) =>
    text?.startsWith("[") ? JSON.parse(text) : text ? ["sh", "-c", text] : [];
  const healthcheck = final.config.HEALTHCHECK;
  const image = {
    tags: ["access-connectors:latest", `access-connectors:${version}`],
    from: final.image,
    labels: final.labels,
    env: final.env,
    workdir: final.workdir,
    user: final.config.USER,
    volumes: json(final.config.VOLUME),
    healthcheck: healthcheck && json(healthcheck.replace(/^(--\S+\s+)*CMD\s+/, "")),
    entrypoint: json(final.config.ENTRYPOINT),
    cmd: json(final.config.CMD),
  };
  await writeFile(join(out, MARKER), `${JSON.stringify(image, null, 2)}\n`);
  await writeFile(join(out, "start.sh"), startScript(image), { mode: 0o755 });
  await rm(stagesDir, { recursive: true, force: true });
  console.log(
    `built ${image.tags.join(", ")} into ${out} (start: ${join(out, "start.sh")} <connector>)`,
  );
}

/** A shell script that runs the entrypoint as the image would, its absolute paths under here. */
function startScript(image) {
  const mapped = (value) => (value.startsWith("/") ? `"$here${value}"` : shellQuote(value));
  const env = Object.entries(image.env).map(
    ([key, value]) =>
      `export ${key}="\${${key}:-${value.startsWith("/") ? `$here${value}` : value}}"`,
  );
  return [
    "#!/bin/sh",
    "# Written by scripts/container-build.mjs: the image's ENTRYPOINT and ENV, paths mapped here.",
    'here="$(cd "$(dirname "$0")" && pwd)"',
    ...env,
    `cd "$here${image.workdir}"`,
    `exec ${[...image.entrypoint, ...image.cmd].map(mapped).join(" ")} "$@"`,
    "",
  ].join("\n");
}

function shellQuote(value) {
  return /^[A-Za-z0-9_./:=-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

try {
  await build();
} catch (error) {
  console.error(
    `container build failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}
