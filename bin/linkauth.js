#!/usr/bin/env node
// The `linkauth` command: runs the compiled CLI (built by `npm ci` through the prepare script).
import { runCli } from '../dist/src/cli/main.js'

process.exitCode = await runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
  env: process.env,
})
