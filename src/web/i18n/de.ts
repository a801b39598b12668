import { en, type Messages } from './en.js'

export const de: Messages = en
