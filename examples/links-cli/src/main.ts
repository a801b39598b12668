/** `npm run links-cli -- <command>`: the links CLI as a process. */
import { runLinksCli } from './cli.js'

process.exitCode = await runLinksCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
})
