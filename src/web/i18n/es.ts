import { en, type Messages } from './en.js'

export const es: Messages = en
