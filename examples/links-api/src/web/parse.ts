export { parseInput } from '../../../shared/parse.js'
