export { notFoundPage, visitorPage } from '../../../shared/pages.js'
