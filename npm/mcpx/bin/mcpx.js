#!/usr/bin/env node
// Launcher for mcpx installed from npm.
//
// The binary itself lives in a platform package (@mcpx/mcpx-linux-x64 and
// so on), one of this package's optionalDependencies; npm installs only the
// one whose os and cpu match. This script finds it and runs it with the
// launcher's own stdin, stdout and stderr (inherited file descriptors, so
// every byte goes straight between the MCP client and mcpx, and mcpx sees
// stdin close when the client closes it), forwards SIGINT, SIGTERM and
// SIGHUP, and exits the way mcpx exits.
//
// MCPX_BINARY=/path/to/mcpx runs that binary instead.
"use strict";

const { spawn } = require("child_process");
const os = require("os");
const path = require("path");

const manifest = require("../package.json");

function fail(message) {
  process.stderr.write(`mcpx: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  if (process.env.MCPX_BINARY) {
    return process.env.MCPX_BINARY;
  }
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `${manifest.name}-${platform}`;
  const supported = Object.keys(manifest.optionalDependencies || {});
  if (!supported.includes(pkg)) {
    const platforms = supported.map((p) => p.slice(manifest.name.length + 1));
    fail(
      `no prebuilt binary for ${platform} (there are: ${platforms.join(", ")}); ` +
        "build one with: go install github.com/mcpx/mcpx/cmd/mcpx@latest",
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(
      `the binary for ${platform} is missing: ${pkg} is not installed. ` +
        `It is an optional dependency of ${manifest.name}, so it is left out when ` +
        "optional dependencies are omitted (--omit=optional, --no-optional) or " +
        "when node_modules was copied from another platform; reinstall " +
        `${manifest.name} on this machine with optional dependencies.`,
    );
  }
  return path.join(dir, "bin", process.platform === "win32" ? "mcpx.exe" : "mcpx");
}

const bin = binaryPath();
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// The launcher stays until mcpx exits. On Windows there is nothing to
// forward: Ctrl-C and closing the console reach mcpx directly, and
// child.kill would terminate it on the spot, without its own cleanup.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
function forward(signal) {
  if (process.platform !== "win32" && child.exitCode === null && child.signalCode === null) {
    try {
      child.kill(signal);
    } catch {
      // The child is already gone; its exit event follows.
    }
  }
}
for (const signal of forwarded) {
  process.on(signal, forward);
}

child.on("error", (err) => {
  // Only a failed spawn ends the launcher here; for anything else the
  // exit event follows.
  if (child.pid === undefined) {
    fail(`cannot run ${bin}: ${err.message}`);
  }
});

child.on("exit", (code, signal) => {
  if (signal === null) {
    process.exit(code === null ? 1 : code);
  }
  // mcpx died of a signal: die of the same one, so that whoever started
  // the launcher sees what happened to mcpx.
  for (const s of forwarded) {
    process.removeListener(s, forward);
  }
  const number = os.constants.signals[signal] || 0;
  try {
    process.kill(process.pid, signal);
  } catch {
    process.exit(128 + number);
  }
  // Not every signal ends a process (and Windows has none to re-raise).
  setTimeout(() => process.exit(128 + number), 1000);
});
