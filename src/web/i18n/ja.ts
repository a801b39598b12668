import { en, type Messages } from './en.js'

export const ja: Messages = en
