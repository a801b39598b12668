import { en, type Messages } from './en.js'

export const fr: Messages = en
