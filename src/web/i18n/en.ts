import { html, type SafeHtml } from '../html.js'
import { plural } from './format.js'
import { type Scope, SCOPE_DESCRIPTIONS } from '../../lib/scopes.js'

type Html = SafeHtml | string

/**
 * The English catalogue: it defines the keys. Every other language has exactly these keys
 * (`satisfies Messages` in its file, and test/unit/i18n-catalogues.test.ts). A value is a string, or a
 * function for a message with parts: names and hosts arrive escaped or as SafeHtml, counts as numbers
 * (plurals through Intl.PluralRules: see plural() in format.ts), durations already in words.
 */
export const en = {
  // The page shell
  languageMenu: 'Language',
  brandLinksMenu: 'Help and legal',
  contactSupport: 'Contact support',
  helpAndSupport: 'Help and support',
  errorCode: (code: string) => html`Error code: <code>${code}</code>`,
  detailsInEnglish: 'Details, in English:',

  // Error pages
  notFoundTitle: 'Page not found',
  serverErrorTitle: 'Something went wrong on our side',
  requestErrorTitle: 'This request cannot be completed',
  notFoundMessage: 'There is no page at this address.',
  serverErrorAdvice: 'Please try again in a moment. If it keeps happening, try again later.',
  notFoundAdvice: 'Check the address, or go back to the application you came from.',
  requestErrorAdvice:
    'Go back to the application you came from and start again. If this keeps happening, contact its developer.',
  tooManyRequestsTitle: 'Too many requests',
  tooManyRequestsMessage: 'There were too many requests from your network in a short time.',
  tooManyRequestsAdvice: (wait: string) => `Wait ${wait}, then go back and try again.`,
  tooManySignInAttempts: (wait: string) => `Too many sign-in attempts. Wait ${wait} and try again.`,

  // Messages a page route answers with (the error page translates them when it knows them)
  problems: {
    formExpired: 'This form has expired. Reload the page and try again.',
    signInFormExpired: 'The sign-in form has expired. Reload the page and try again.',
    signOutFormExpired: 'The sign-out form has expired. Reload the page and try again.',
    resetFormExpired: 'This form has expired. Open the link again.',
    sessionEnded: 'Your session has ended. Sign in and try again.',
    signInFirst: 'Sign in first.',
    signInRequestExpired:
      'This sign-in request has expired or was already used. Go back to the application and start again.',
    authorizationGone:
      'This authorization request has expired or was already answered. Go back to the application and start again.',
    chooseAllowOrDeny: 'Choose Allow or Deny.',
    deviceCodeGone:
      'This code has expired or was already used. Start again on your device to get a new code.',
    deviceFormInvalid: 'This form is not valid for your session. Enter the code again.',
    passkeysOff: 'Passkeys are turned off on this server.',
    noSuchPasskey: 'No such passkey.',
    passkeyBeforePasswordOff: 'Add a passkey before you turn password sign-in off.',
    linkNoLongerWorks: 'This link no longer works. Ask for a new one.',
    unexpected: 'An unexpected error occurred.',
    unavailable: 'The service is temporarily unavailable. Try again shortly.',
    malformed: 'The request is malformed.',
  },

  // Sign-in
  signInTitle: 'Sign in',
  signInHeading: (service: string) => `Sign in to ${service}`,
  toContinueTo: (app: SafeHtml) => html`to continue to ${app}`,
  signInFailed: 'Email or password is incorrect',
  passkeySignInFailed: 'That passkey did not sign you in. Try again, or use your password.',
  passkeyNotOnAccount:
    'That passkey is not on any account here (it may have been removed). Use another passkey, or your password.',
  email: 'Email',
  password: 'Password',
  signIn: 'Sign in',
  usePasskey: 'Use a passkey',
  neverSeesPassword: (service: string, app: Html) =>
    html`${service} checks your password; ${app} never sees it.`,
  signedInTitle: 'Signed in',
  signedInHeading: 'You are signed in',
  signedInAs: (email: string) => html`Signed in as <strong>${email}</strong>`,
  signedInAsSentence: (email: string) => html`Signed in as <strong>${email}</strong>.`,
  closeThisPage: 'You can close this page and return to the application you came from.',
  seeConnectedApps: 'See the applications connected to your account',
  signOut: 'Sign out',

  // How an application is shown: its standing
  runsOnThisDevice: 'It runs on your computer: it receives the answer on this device.',
  nameWithheld:
    'It called itself by a name reserved here (this service’s, or an application’s it is not), so it is shown by its host.',
  verifiedBody: 'Registered with this service by its operator.',
  vouchedBody: (name: Html, host: SafeHtml, hostText: Html) =>
    html`Not registered with this service. “${name}” is the name the application gives itself; ${host} vouches for it. Go on only if you know and trust ${hostText}.`,
  unverifiedBody: (name: Html, host: SafeHtml) =>
    html`It registered itself automatically and this service has not checked who runs it; “${name}” is the name it gives itself. Its answers go to ${host}.`,
  unverifiedBodyNoAddress: (name: Html, host: SafeHtml) =>
    html`It registered itself automatically and this service has not checked who runs it; “${name}” is the name it gives itself. It has ${host}: it fetches its answers from this service itself.`,
  noWebAddress: 'no web address',
  verifiedLabel: 'Verified application.',
  vouchedLabel: (host: string) => `Vouched for by ${host}.`,
  unverifiedLabel: 'Unverified application.',
  standingTags: { verified: 'Verified', vouched: 'Vouched for by its host', unverified: 'Unverified' },

  // What the operator registered about an application
  website: 'Website',
  privacyPolicy: 'Privacy policy',
  termsOfService: 'Terms of service',
  linkOfApp: (app: string) => ` of ${app}`,
  opensInNewTab: ' (opens in a new tab)',
  aboutApp: (app: string) => `About ${app}`,

  // Consent
  /** The scope table's descriptions (src/lib/scopes.ts), each language its own. */
  scopes: SCOPE_DESCRIPTIONS as Record<Scope, string>,
  ifYouAllow: 'If you allow it, it will be able to:',
  ifYouContinue: 'If you continue, it will be able to:',
  allowTitle: (app: string) => `Allow ${app}?`,
  continueTitle: (app: string) => `Continue to ${app}?`,
  consentHeading: (title: SafeHtml) =>
    html`<span class="app-title">${title}</span> wants to use your account`,
  continueHeading: (title: SafeHtml) => html`Continue to <span class="app-title">${title}?</span>`,
  allowedBefore: (app: Html) =>
    html`You allowed this application before. It receives the answer on a device, where another program could pretend to be it: continue only if you just started this from ${app}.`,
  onlyThroughServices: 'Only through these services:',
  allowingSendsBack: (app: Html, destination: SafeHtml) =>
    html`${app} will not see your password. Allowing sends you back to ${destination}. You can disconnect the application at any time in your account.`,
  continuingSendsBack: (app: Html, destination: SafeHtml) =>
    html`${app} will not see your password. Continuing sends you back to ${destination}. You can disconnect the application at any time in your account.`,
  allow: 'Allow',
  deny: 'Deny',
  continue: 'Continue',
  cancel: 'Cancel',
  notYou: 'Not you?',
  switchAccount: 'Switch account',

  // The device grant's pages
  connectDevice: 'Connect a device',
  enterDeviceCode: 'Enter the code shown on the device or in the terminal you are signing in from.',
  code: 'Code',
  onlyYourOwnCode: 'Only enter a code you got from a device you are using yourself right now.',
  wrongDeviceCode: 'That code is not valid. Check the code on your device and try again.',
  tickTheBox: 'Tick the box to confirm you started this sign-in yourself, or choose Deny.',
  deviceConsentTitle: (app: string) => `Allow ${app} on another device?`,
  deviceConsentHeading: (title: SafeHtml) =>
    html`<span class="app-title">${title}</span> wants to use your account on another device`,
  anotherDeviceWarning: html`<strong>This application will run on another device, not in this browser.</strong> Allow it only if you started this sign-in yourself, on a device you are using now. If someone sent you this code or link, choose Deny: they would get access to your account.`,
  startedItMyself: 'I started this sign-in myself on a device I am using now.',
  deviceConnected: 'Device connected',
  requestDenied: 'Request denied',
  deviceAllowed: (app: Html) =>
    html`${app} can now use your account on your device. You can close this page and go back to it. You can disconnect it at any time in your account.`,
  deviceDenied: (app: Html) => html`${app} will not get access. You can close this page.`,

  // The account area
  yourAccount: 'Your account',
  navApps: 'Connected apps',
  navPasskeys: 'Passkeys',
  navPassword: 'Password',
  navActivity: 'Recent activity',
  connectedAppsTitle: 'Connected applications',
  revokedNotice: (app: string) =>
    html`You revoked access for <strong>${app}</strong>. It can no longer use your account.`,
  noConnectedApps: 'No application is connected to your account.',
  connectedAppsIntro:
    'These applications have your permission to use your account. Revoking one takes effect at once.',
  appConnected: 'Connected: it can use your account now.',
  appSignedOut:
    'Signed out: it holds no access now, but it may sign in again without asking you until you revoke it (revoking forgets that you allowed it).',
  onAnotherDevice: (host: SafeHtml) =>
    html`Runs on another device: you connected it with a code. Its host: ${host}.`,
  appCan: 'Can:',
  appThrough: 'Through:',
  firstAuthorized: 'First authorized',
  lastUsed: 'Last used',
  never: 'never',
  revoke: 'Revoke',
  revokeApp: (app: string) => `Revoke ${app}`,

  // Recent activity
  recentActivity: 'Recent activity',
  nothingYet: 'Nothing yet.',
  anApplication: 'an application',
  aPasskey: 'a passkey',
  revokeReasons: {
    user_revoked: 'you revoked its access',
    client_disabled: 'the service disabled the application',
    operator_revoked: 'the service revoked its access',
    other: 'revoked',
  },
  eventConsentGranted: (app: SafeHtml, scopes: SafeHtml | '') => html`You allowed ${app}${scopes}`,
  eventConsentWidened: (app: SafeHtml, scopes: SafeHtml | '') =>
    html`You allowed ${app} more${scopes ? html` (now ${scopes})` : ''}`,
  eventGrantRevoked: (app: SafeHtml, reason: string) => html`Access for ${app} ended: ${reason}`,
  eventPasswordChanged: 'Your password was changed',
  eventPasswordReset: 'Your password was set with a reset link',
  eventPasskeyRegistered: (passkey: SafeHtml) => html`Passkey ${passkey} was added`,
  eventPasskeyRenamed: (passkey: SafeHtml) => html`A passkey was renamed to ${passkey}`,
  eventPasskeyRemoved: (passkey: SafeHtml) => html`Passkey ${passkey} was removed`,
  eventPasskeyReset: (passkey: SafeHtml) =>
    html`A reset link added passkey ${passkey}; every browser was signed out and every application disconnected`,
  eventPasswordSignInOff: 'Signing in with your password was turned off',
  eventPasswordSignInOn: 'Signing in with your password was turned on',

  // Passkeys
  passkeys: 'Passkeys',
  passkeyAdded: 'Your passkey was added. You can sign in with it now.',
  passkeyRenamed: 'Your passkey was renamed.',
  passkeyRemoved: 'Your passkey was removed. It no longer signs you in.',
  passkeyConfirmed: 'Thank you. You can add a passkey now.',
  noPasskeyYet: 'You have no passkey yet.',
  added: 'Added',
  kept: 'Kept',
  keptSynced: 'synced to your other devices',
  keptOnOneDevice: 'on one device',
  newNameFor: (passkey: string) => `New name for ${passkey}`,
  rename: 'Rename',
  remove: 'Remove',
  removePasskey: (passkey: string) => `Remove ${passkey}`,
  addPasskey: 'Add a passkey',
  passkeyExplained:
    'A passkey signs you in with your device’s screen lock (fingerprint, face or PIN). It works only on this site, so a look-alike page cannot use it.',
  name: 'Name',
  defaultPasskeyName: 'My passkey',
  passkeyNameHint: 'To tell your passkeys apart, e.g. the device it is on.',
  confirmItIsYou: 'First confirm it is you.',
  yourPassword: 'Your password',
  confirm: 'Confirm',
  confirmWithPasskey: 'Confirm with a passkey',
  passkeyNotSaved: 'No passkey was saved. Try again, or use another device.',
  passkeySignInDidNotWork: 'Signing in with a passkey did not work. Try again, or use your password.',
  passkeyRegisterFailed: 'No passkey was added: the browser or device did not complete it. Try again.',
  passkeyAlreadyRegistered: 'This passkey is already registered.',
  passkeyAlreadyRegisteredElsewhere:
    'This passkey is already registered. Use another device or passkey provider.',
  confirmFirst: 'Confirm it is you first, then add the passkey.',
  passkeyNameRule: 'Give the passkey a name of 1 to 64 characters.',
  notConfirmed: 'That did not confirm it is you. Try again.',

  // Password
  newPassword: 'New password',
  atLeast8: 'At least 8 characters.',
  repeatNewPassword: 'Repeat the new password',
  changePassword: 'Change password',
  changeYourPassword: 'Change your password',
  currentPassword: 'Current password',
  disconnectAllApps: 'Disconnect all applications',
  disconnectExplained:
    'Applications you connected keep working after a password change unless you disconnect them here; do so if someone else may have used your account.',
  othersSignedOut: 'Every other browser signed in to your account is signed out.',
  signingInWithPassword: 'Signing in with your password',
  passwordSignInIsOn: 'Your password signs you in, as do your passkeys.',
  passwordSignInIsOff:
    'Password sign-in is off: only your passkeys sign you in. The password form refuses your account.',
  addPasskeyFirst: html`To sign in with passkeys only, <a href="/account/passkeys">add a passkey</a> first.`,
  turnPasswordSignInOff: 'Turn password sign-in off',
  turnPasswordSignInOn: 'Turn password sign-in on',
  passwordSignInOnAgain: 'Password sign-in is on again.',
  passwordSignInOffNow: 'Password sign-in is off. Sign in with your passkeys.',
  currentPasswordWrong: 'The current password is not correct.',
  passwordTooShort: 'The new password must have at least 8 characters.',
  passwordTooLong: 'The new password must have at most 1024 characters.',
  passwordsDiffer: 'The two new passwords are not the same.',
  passwordChanged: 'Password changed',
  passwordChangedMessage:
    'Your password has been changed. Every other browser signed in to your account is signed out.',
  appsDisconnected: (count: number) =>
    `${plural('en', count, { one: 'One application was', other: '# applications were' })} disconnected: each must ask for your permission again.`,
  backToConnectedApps: 'Back to your connected applications',
  setNewPassword: 'Set a new password',
  setPassword: 'Set password',
  resetLinkWorksOnce:
    'This link works once. Setting a password signs you out everywhere and disconnects every application connected to your account.',
  passwordSet: 'Password set',
  passwordSetMessage:
    'Your new password is set. You have been signed out everywhere, and every application connected to your account is disconnected.',
  signInWithNewPassword: 'Sign in with your new password',
  addNewPasskey: 'Add a new passkey',
  passwordlessReset: 'Your account signs in with passkeys only. Add a passkey on this device to get back in.',
  passkeyNameLabel: 'Name of the passkey',
  defaultResetPasskeyName: 'Passkey',
  resetPasskeyNameHint: 'So you can tell your passkeys apart, e.g. "Work laptop".',
  resetPasskeyWorksOnce:
    'This link works once. Adding the passkey signs you out everywhere and disconnects every application connected to your account. A browser without passkeys cannot use this link: open it on a device that has them.',
  passkeyAddedTitle: 'Passkey added',
  passkeyAddedMessage: (passkey: string) =>
    `Your new passkey ${passkey} is added and your account stays passwordless. You have been signed out everywhere, and every application connected to your account is disconnected.`,
  signInWithPasskey: 'Sign in with your passkey',
  linkExpired: 'Link expired',
  linkNoLongerWorks: 'This link no longer works',
  resetLinksWorkOnce: 'Password-reset links work once, for 30 minutes. Ask for a new one.',
}

/** What every catalogue provides: the keys of the English one, with the same kind of value each. */
export type Messages = typeof en
