import { en, type Messages } from './en.js'

export const ar: Messages = en
