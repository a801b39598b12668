import type { ImportLimits } from './import-reader.js'

export interface ImportSettings extends ImportLimits {
  /** Rows per committed batch (LINKS_IMPORT_BATCH_SIZE). */
  batchSize: number
  /** How long a job stays with the instance working on it without news (a dead instance's job is taken over after). */
  leaseSeconds: number
}

export const DEFAULT_IMPORT_SETTINGS: ImportSettings = {
  maxBytes: 50 * 1024 * 1024,
  maxRows: 200_000,
  batchSize: 500,
  leaseSeconds: 30,
}

/** Report lines shown in one answer (dry run, or a page of a job's report). */
export const REPORT_LINES = 1000
/** Rows read from an upload before they are checked (dry run) or staged (import) together. */
export const STAGE_CHUNK = 500
