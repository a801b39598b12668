import { type Command, table } from './command.js'

/** `housekeeping run`: delete expired rows now. */
export const HOUSEKEEPING_COMMANDS: Command[] = [
  {
    name: 'housekeeping run',
    usage: 'housekeeping run',
    summary: 'delete expired rows now (the HOUSEKEEPING_INTERVAL schedule does it too)',
    options: {},
    // A first run after months without one may take minutes: each batch is short, the run is not.
    run: (request) => request('POST', '/admin/housekeeping/run', undefined, 30 * 60_000),
    show: (r) => {
      const run = r as { outcome: string; deleted: Record<string, number>; duration_seconds: number }
      const rows = Object.entries(run.deleted).map(([table, n]) => [table, String(n)])
      return `${run.outcome} in ${run.duration_seconds} s\n${table([['TABLE', 'DELETED'], ...rows])}`
    },
  },
]
