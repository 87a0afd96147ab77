// A local Serverless Framework plugin: `serverless package` and `serverless deploy` bundle the
// functions themselves (scripts/package-functions.mjs: esbuild, one self-contained zip each under
// .build/functions/, the artifacts serverless.yml names), so a fresh clone deploys right after
// `npm ci` with `npx serverless deploy --stage prod`. CommonJS because the framework `require`s
// plugins; the bundler is an ES module, loaded with `import()`.
//
// ACCESS_CONNECTORS_PREBUNDLED=1 skips the bundling, for a caller that has just bundled the same
// sources itself (the AWS tests' harness does, once, under a lock, while other tests read the zips).
"use strict";
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

class BundleFunctions {
  constructor(serverless, _options, { log } = {}) {
    this.serverless = serverless;
    this.log = log;
    const bundle = () => this.bundle();
    this.hooks = {
      "before:package:createDeploymentArtifacts": bundle,
      "before:deploy:function:packageFunction": bundle,
    };
  }

  async bundle() {
    if (process.env.ACCESS_CONNECTORS_PREBUNDLED === "1") {
      this.log?.notice?.("functions already bundled (ACCESS_CONNECTORS_PREBUNDLED=1)");
      return;
    }
    const script = join(__dirname, "..", "..", "scripts", "package-functions.mjs");
    const { packageFunctions } = await import(pathToFileURL(script).href);
    const report = await packageFunctions({ quiet: true });
    for (const r of report) {
      this.log?.notice?.(`bundled ${r.zip} (${Math.round(r.zipped / 1024)} KiB)`);
    }
  }
}

module.exports = BundleFunctions;
