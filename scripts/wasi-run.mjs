// Runs a wasm32-wasip1 program (such as a `cargo test` binary) under Node's
// built-in WASI, offline, with no package to install.
//
//   node scripts/wasi-run.mjs PROGRAM.wasm [ARGS...]
//
// As a cargo runner (what scripts/wasm-test.sh sets):
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node $PWD/scripts/wasi-run.mjs" \
//     cargo test --target wasm32-wasip1 -p hydron-core
//
// The program sees the current directory as `.` (cargo runs tests from the
// package's directory, where proptest finds its regression files) and the
// system temporary directory as `/tmp` (TMPDIR is set to it). It gets the
// environment, and its exit status becomes Node's.
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";

// Node 20's node:wasi offers its syscalls to V8 as "fast API calls", which
// optimized (TurboFan) wasm calls straight into C++ with no GC-safe exit;
// node:wasi is known to be able to trigger a GC from inside such a call and
// corrupt the JS heap (nodejs/node#46777, #53087). hydron-core's longer test
// binaries hit it: every test passed, then Node died with SIGSEGV or
// "TypeError: number 0 is not a function", more often under
// `--stress-compaction`. With the fast path off (every syscall an ordinary
// API call) the crash is gone, stress or not. It has to be set before any code
// calling into node:wasi is optimized, hence first thing here.
import v8 from "node:v8";
v8.setFlagsFromString("--no-turbo-fast-api-calls");

// node:wasi is "experimental" in Node 20 and says so on every run; the
// warning is noise in test output, so only that one is silenced.
const emitWarning = process.emitWarning;
process.emitWarning = (warning, ...rest) => {
  const text = typeof warning === "string" ? warning : warning?.message ?? "";
  if (!/WASI/.test(text)) emitWarning.call(process, warning, ...rest);
};
const { WASI } = await import("node:wasi");

const [program, ...args] = process.argv.slice(2);
if (!program) {
  console.error("usage: node scripts/wasi-run.mjs PROGRAM.wasm [ARGS...]");
  process.exit(2);
}

const wasi = new WASI({
  version: "preview1",
  args: [program, ...args],
  env: { ...process.env, TMPDIR: "/tmp" },
  preopens: { ".": process.cwd(), "/tmp": tmpdir() },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
