export {
  randomSlug,
  RANDOM_SLUG_LENGTH,
  RESERVED_SLUGS,
  SLUG_PATTERN,
  slugProblem,
} from '../../../shared/slug.js'
