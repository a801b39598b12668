export { MAX_TARGET_URL_LENGTH, normalizeTargetUrl, targetUrlProblem } from '../../../shared/target-url.js'
