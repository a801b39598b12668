import { html } from '../html.js'
import type { Messages } from './en.js'
import { plural } from './format.js'

/** Deutsch (Sie-Form). */
export const de = {
  languageMenu: 'Sprache',
  brandLinksMenu: 'Hilfe und Rechtliches',
  contactSupport: 'Support kontaktieren',
  helpAndSupport: 'Hilfe und Support',
  errorCode: (code) => html`Fehlercode: <code>${code}</code>`,
  detailsInEnglish: 'Einzelheiten, auf Englisch:',

  notFoundTitle: 'Seite nicht gefunden',
  serverErrorTitle: 'Bei uns ist etwas schiefgegangen',
  requestErrorTitle: 'Diese Anfrage kann nicht abgeschlossen werden',
  notFoundMessage: 'Unter dieser Adresse gibt es keine Seite.',
  serverErrorAdvice:
    'Bitte versuchen Sie es gleich noch einmal. Wenn es weiterhin passiert, versuchen Sie es später.',
  notFoundAdvice: 'Prüfen Sie die Adresse, oder kehren Sie zu der Anwendung zurück, von der Sie kamen.',
  requestErrorAdvice:
    'Kehren Sie zu der Anwendung zurück, von der Sie kamen, und beginnen Sie von vorn. Wenn das wieder passiert, wenden Sie sich an ihre Entwickler.',
  tooManyRequestsTitle: 'Zu viele Anfragen',
  tooManyRequestsMessage: 'Aus Ihrem Netzwerk kamen in kurzer Zeit zu viele Anfragen.',
  tooManyRequestsAdvice: (wait) => `Warten Sie ${wait}, gehen Sie dann zurück und versuchen Sie es erneut.`,
  tooManySignInAttempts: (wait) =>
    `Zu viele Anmeldeversuche. Warten Sie ${wait} und versuchen Sie es erneut.`,

  problems: {
    formExpired: 'Dieses Formular ist abgelaufen. Laden Sie die Seite neu und versuchen Sie es erneut.',
    signInFormExpired:
      'Das Anmeldeformular ist abgelaufen. Laden Sie die Seite neu und versuchen Sie es erneut.',
    signOutFormExpired:
      'Das Abmeldeformular ist abgelaufen. Laden Sie die Seite neu und versuchen Sie es erneut.',
    resetFormExpired: 'Dieses Formular ist abgelaufen. Öffnen Sie den Link erneut.',
    sessionEnded: 'Ihre Sitzung ist beendet. Melden Sie sich an und versuchen Sie es erneut.',
    signInFirst: 'Melden Sie sich zuerst an.',
    signInRequestExpired:
      'Diese Anmeldeanfrage ist abgelaufen oder wurde schon verwendet. Kehren Sie zur Anwendung zurück und beginnen Sie von vorn.',
    authorizationGone:
      'Diese Autorisierungsanfrage ist abgelaufen oder wurde schon beantwortet. Kehren Sie zur Anwendung zurück und beginnen Sie von vorn.',
    chooseAllowOrDeny: 'Wählen Sie „Erlauben“ oder „Ablehnen“.',
    deviceCodeGone:
      'Dieser Code ist abgelaufen oder wurde schon verwendet. Beginnen Sie auf Ihrem Gerät von vorn, um einen neuen Code zu erhalten.',
    deviceFormInvalid: 'Dieses Formular gilt nicht für Ihre Sitzung. Geben Sie den Code erneut ein.',
    passkeysOff: 'Passkeys sind auf diesem Server ausgeschaltet.',
    noSuchPasskey: 'Diesen Passkey gibt es nicht.',
    passkeyBeforePasswordOff:
      'Fügen Sie einen Passkey hinzu, bevor Sie die Anmeldung mit Passwort ausschalten.',
    linkNoLongerWorks: 'Dieser Link funktioniert nicht mehr. Fordern Sie einen neuen an.',
    unexpected: 'Ein unerwarteter Fehler ist aufgetreten.',
    unavailable: 'Der Dienst ist vorübergehend nicht erreichbar. Versuchen Sie es gleich noch einmal.',
    malformed: 'Die Anfrage ist fehlerhaft.',
  },

  signInTitle: 'Anmelden',
  signInHeading: (service) => `Bei ${service} anmelden`,
  toContinueTo: (app) => html`um mit ${app} fortzufahren`,
  signInFailed: 'E-Mail-Adresse oder Passwort ist falsch',
  passkeySignInFailed:
    'Dieser Passkey hat Sie nicht angemeldet. Versuchen Sie es erneut, oder verwenden Sie Ihr Passwort.',
  passkeyNotOnAccount:
    'Dieser Passkey gehört hier zu keinem Konto (vielleicht wurde er entfernt). Verwenden Sie einen anderen Passkey oder Ihr Passwort.',
  email: 'E-Mail-Adresse',
  password: 'Passwort',
  signIn: 'Anmelden',
  usePasskey: 'Mit Passkey anmelden',
  neverSeesPassword: (service, app) => html`${service} prüft Ihr Passwort; ${app} bekommt es nie zu sehen.`,
  signedInTitle: 'Angemeldet',
  signedInHeading: 'Sie sind angemeldet',
  signedInAs: (email) => html`Angemeldet als <strong>${email}</strong>`,
  signedInAsSentence: (email) => html`Angemeldet als <strong>${email}</strong>.`,
  closeThisPage: 'Sie können diese Seite schließen und zu der Anwendung zurückkehren, von der Sie kamen.',
  seeConnectedApps: 'Die mit Ihrem Konto verbundenen Anwendungen ansehen',
  signOut: 'Abmelden',

  runsOnThisDevice: 'Sie läuft auf Ihrem Computer: Sie erhält die Antwort auf diesem Gerät.',
  nameWithheld:
    'Sie nannte sich mit einem hier vorbehaltenen Namen (dem dieses Dienstes oder dem einer anderen Anwendung), daher wird sie mit ihrem Host angezeigt.',
  verifiedBody: 'Vom Betreiber bei diesem Dienst registriert.',
  vouchedBody: (name, host, hostText) =>
    html`Nicht bei diesem Dienst registriert. „${name}“ ist der Name, den sich die Anwendung selbst gibt; ${host} bürgt für sie. Fahren Sie nur fort, wenn Sie ${hostText} kennen und ihm vertrauen.`,
  unverifiedBody: (name, host) =>
    html`Sie hat sich selbst automatisch registriert, und dieser Dienst hat nicht geprüft, wer sie betreibt; „${name}“ ist der Name, den sie sich selbst gibt. Ihre Antworten gehen an ${host}.`,
  unverifiedBodyNoAddress: (name, host) =>
    html`Sie hat sich selbst automatisch registriert, und dieser Dienst hat nicht geprüft, wer sie betreibt; „${name}“ ist der Name, den sie sich selbst gibt. Sie hat ${host}: Sie holt ihre Antworten selbst bei diesem Dienst ab.`,
  noWebAddress: 'keine Webadresse',
  verifiedLabel: 'Geprüfte Anwendung.',
  vouchedLabel: (host) => `${host} bürgt für sie.`,
  unverifiedLabel: 'Ungeprüfte Anwendung.',
  standingTags: { verified: 'Geprüft', vouched: 'Ihr Host bürgt für sie', unverified: 'Ungeprüft' },

  website: 'Website',
  privacyPolicy: 'Datenschutzerklärung',
  termsOfService: 'Nutzungsbedingungen',
  linkOfApp: (app) => ` von ${app}`,
  opensInNewTab: ' (öffnet sich in einem neuen Tab)',
  aboutApp: (app) => `Über ${app}`,

  scopes: {
    'links:read': 'Ihre Kurzlinks, Tags und Statistiken lesen',
    'links:write': 'Ihre Kurzlinks erstellen, ändern und löschen',
    'ecommerce:write': 'Ihre E-Commerce-Links und das Conversion-Tracking verwalten',
    'products:sync': 'Ihren Produktkatalog aus einem Onlineshop synchronisieren',
  },
  ifYouAllow: 'Wenn Sie es erlauben, kann sie:',
  ifYouContinue: 'Wenn Sie fortfahren, kann sie:',
  allowTitle: (app) => `${app} erlauben?`,
  continueTitle: (app) => `Weiter zu ${app}?`,
  consentHeading: (title) => html`<span class="app-title">${title}</span> möchte Ihr Konto verwenden`,
  continueHeading: (title) => html`Weiter zu <span class="app-title">${title}?</span>`,
  allowedBefore: (app) =>
    html`Sie haben diese Anwendung schon einmal erlaubt. Sie erhält die Antwort auf einem Gerät, auf dem sich ein anderes Programm als sie ausgeben könnte: Fahren Sie nur fort, wenn Sie dies gerade eben in ${app} gestartet haben.`,
  onlyThroughServices: 'Nur über diese Dienste:',
  allowingSendsBack: (app, destination) =>
    html`${app} bekommt Ihr Passwort nicht zu sehen. Mit „Erlauben“ kehren Sie zu ${destination} zurück. Sie können die Anwendung jederzeit in Ihrem Konto trennen.`,
  continuingSendsBack: (app, destination) =>
    html`${app} bekommt Ihr Passwort nicht zu sehen. Mit „Weiter“ kehren Sie zu ${destination} zurück. Sie können die Anwendung jederzeit in Ihrem Konto trennen.`,
  allow: 'Erlauben',
  deny: 'Ablehnen',
  continue: 'Weiter',
  cancel: 'Abbrechen',
  notYou: 'Nicht Sie?',
  switchAccount: 'Konto wechseln',

  connectDevice: 'Gerät verbinden',
  enterDeviceCode:
    'Geben Sie den Code ein, den das Gerät oder das Terminal anzeigt, an dem Sie sich anmelden.',
  code: 'Code',
  onlyYourOwnCode:
    'Geben Sie nur einen Code ein, den Sie von einem Gerät haben, das Sie gerade selbst benutzen.',
  wrongDeviceCode:
    'Dieser Code ist ungültig. Prüfen Sie den Code auf Ihrem Gerät und versuchen Sie es erneut.',
  tickTheBox:
    'Bestätigen Sie mit dem Häkchen, dass Sie diese Anmeldung selbst gestartet haben, oder wählen Sie „Ablehnen“.',
  deviceConsentTitle: (app) => `${app} auf einem anderen Gerät erlauben?`,
  deviceConsentHeading: (title) =>
    html`<span class="app-title">${title}</span> möchte Ihr Konto auf einem anderen Gerät verwenden`,
  anotherDeviceWarning: html`<strong>Diese Anwendung läuft auf einem anderen Gerät, nicht in diesem Browser.</strong> Erlauben Sie sie nur, wenn Sie diese Anmeldung selbst gestartet haben, auf einem Gerät, das Sie gerade benutzen. Wenn Ihnen jemand diesen Code oder Link geschickt hat, wählen Sie „Ablehnen“: Diese Person bekäme sonst Zugriff auf Ihr Konto.`,
  startedItMyself: 'Ich habe diese Anmeldung selbst auf einem Gerät gestartet, das ich gerade benutze.',
  deviceConnected: 'Gerät verbunden',
  requestDenied: 'Anfrage abgelehnt',
  deviceAllowed: (app) =>
    html`${app} kann Ihr Konto jetzt auf Ihrem Gerät verwenden. Sie können diese Seite schließen und zum Gerät zurückkehren. Sie können die Verbindung jederzeit in Ihrem Konto trennen.`,
  deviceDenied: (app) => html`${app} erhält keinen Zugriff. Sie können diese Seite schließen.`,

  yourAccount: 'Ihr Konto',
  navApps: 'Verbundene Anwendungen',
  navPasskeys: 'Passkeys',
  navPassword: 'Passwort',
  navActivity: 'Letzte Aktivitäten',
  connectedAppsTitle: 'Verbundene Anwendungen',
  revokedNotice: (app) =>
    html`Sie haben <strong>${app}</strong> den Zugriff entzogen. Die Anwendung kann Ihr Konto nicht mehr verwenden.`,
  noConnectedApps: 'Mit Ihrem Konto ist keine Anwendung verbunden.',
  connectedAppsIntro:
    'Diese Anwendungen dürfen Ihr Konto mit Ihrer Erlaubnis verwenden. Ein Widerruf wirkt sofort.',
  appConnected: 'Verbunden: Sie kann Ihr Konto jetzt verwenden.',
  appSignedOut:
    'Abgemeldet: Sie hat jetzt keinen Zugriff, kann sich aber ohne Rückfrage wieder anmelden, bis Sie sie widerrufen (ein Widerruf vergisst Ihre Erlaubnis).',
  onAnotherDevice: (host) =>
    html`Läuft auf einem anderen Gerät: Sie haben sie mit einem Code verbunden. Ihr Host: ${host}.`,
  appCan: 'Darf:',
  appThrough: 'Über:',
  firstAuthorized: 'Zuerst erlaubt',
  lastUsed: 'Zuletzt verwendet',
  never: 'nie',
  revoke: 'Widerrufen',
  revokeApp: (app) => `${app} widerrufen`,

  recentActivity: 'Letzte Aktivitäten',
  nothingYet: 'Noch nichts.',
  anApplication: 'eine Anwendung',
  aPasskey: 'ein Passkey',
  revokeReasons: {
    user_revoked: 'Sie haben ihren Zugriff widerrufen',
    client_disabled: 'der Dienst hat die Anwendung deaktiviert',
    operator_revoked: 'der Dienst hat ihren Zugriff widerrufen',
    other: 'widerrufen',
  },
  eventConsentGranted: (app, scopes) => html`Sie haben ${app} erlaubt${scopes}`,
  eventConsentWidened: (app, scopes) =>
    html`Sie haben ${app} mehr erlaubt${scopes ? html` (jetzt ${scopes})` : ''}`,
  eventGrantRevoked: (app, reason) => html`Zugriff für ${app} beendet: ${reason}`,
  eventPasswordChanged: 'Ihr Passwort wurde geändert',
  eventPasswordReset: 'Ihr Passwort wurde über einen Link zum Zurücksetzen festgelegt',
  eventPasskeyRegistered: (passkey) => html`Passkey ${passkey} wurde hinzugefügt`,
  eventPasskeyRenamed: (passkey) => html`Ein Passkey wurde in ${passkey} umbenannt`,
  eventPasskeyRemoved: (passkey) => html`Passkey ${passkey} wurde entfernt`,
  eventPasskeyReset: (passkey) =>
    html`Ein Link zum Zurücksetzen hat Passkey ${passkey} hinzugefügt; jeder Browser wurde abgemeldet und jede Anwendung getrennt`,
  eventPasswordSignInOff: 'Die Anmeldung mit Passwort wurde ausgeschaltet',
  eventPasswordSignInOn: 'Die Anmeldung mit Passwort wurde eingeschaltet',

  passkeys: 'Passkeys',
  passkeyAdded: 'Ihr Passkey wurde hinzugefügt. Sie können sich jetzt damit anmelden.',
  passkeyRenamed: 'Ihr Passkey wurde umbenannt.',
  passkeyRemoved: 'Ihr Passkey wurde entfernt. Er meldet Sie nicht mehr an.',
  passkeyConfirmed: 'Danke. Sie können jetzt einen Passkey hinzufügen.',
  noPasskeyYet: 'Sie haben noch keinen Passkey.',
  added: 'Hinzugefügt',
  kept: 'Gespeichert',
  keptSynced: 'mit Ihren anderen Geräten synchronisiert',
  keptOnOneDevice: 'auf einem Gerät',
  newNameFor: (passkey) => `Neuer Name für ${passkey}`,
  rename: 'Umbenennen',
  remove: 'Entfernen',
  removePasskey: (passkey) => `${passkey} entfernen`,
  addPasskey: 'Passkey hinzufügen',
  passkeyExplained:
    'Ein Passkey meldet Sie mit der Displaysperre Ihres Geräts an (Fingerabdruck, Gesicht oder PIN). Er funktioniert nur auf dieser Website, eine nachgemachte Seite kann ihn also nicht verwenden.',
  name: 'Name',
  defaultPasskeyName: 'Mein Passkey',
  passkeyNameHint: 'Damit Sie Ihre Passkeys unterscheiden können, z. B. das Gerät, auf dem er liegt.',
  confirmItIsYou: 'Bestätigen Sie zuerst, dass Sie es sind.',
  yourPassword: 'Ihr Passwort',
  confirm: 'Bestätigen',
  confirmWithPasskey: 'Mit Passkey bestätigen',
  passkeyNotSaved:
    'Es wurde kein Passkey gespeichert. Versuchen Sie es erneut, oder verwenden Sie ein anderes Gerät.',
  passkeySignInDidNotWork:
    'Die Anmeldung mit Passkey hat nicht funktioniert. Versuchen Sie es erneut, oder verwenden Sie Ihr Passwort.',
  passkeyRegisterFailed:
    'Es wurde kein Passkey hinzugefügt: Browser oder Gerät haben den Vorgang nicht abgeschlossen. Versuchen Sie es erneut.',
  passkeyAlreadyRegistered: 'Dieser Passkey ist bereits registriert.',
  passkeyAlreadyRegisteredElsewhere:
    'Dieser Passkey ist bereits registriert. Verwenden Sie ein anderes Gerät oder einen anderen Passkey-Anbieter.',
  confirmFirst: 'Bestätigen Sie zuerst, dass Sie es sind, und fügen Sie dann den Passkey hinzu.',
  passkeyNameRule: 'Geben Sie dem Passkey einen Namen mit 1 bis 64 Zeichen.',
  notConfirmed: 'Damit wurde nicht bestätigt, dass Sie es sind. Versuchen Sie es erneut.',

  newPassword: 'Neues Passwort',
  atLeast8: 'Mindestens 8 Zeichen.',
  repeatNewPassword: 'Neues Passwort wiederholen',
  changePassword: 'Passwort ändern',
  changeYourPassword: 'Ihr Passwort ändern',
  currentPassword: 'Aktuelles Passwort',
  disconnectAllApps: 'Alle Anwendungen trennen',
  disconnectExplained:
    'Verbundene Anwendungen funktionieren nach einer Passwortänderung weiter, es sei denn, Sie trennen sie hier; tun Sie das, wenn jemand anderes Ihr Konto benutzt haben könnte.',
  othersSignedOut: 'Alle anderen Browser, die bei Ihrem Konto angemeldet sind, werden abgemeldet.',
  signingInWithPassword: 'Anmeldung mit Ihrem Passwort',
  passwordSignInIsOn: 'Ihr Passwort meldet Sie an, ebenso Ihre Passkeys.',
  passwordSignInIsOff:
    'Die Anmeldung mit Passwort ist aus: Nur Ihre Passkeys melden Sie an. Das Passwortformular lehnt Ihr Konto ab.',
  addPasskeyFirst: html`Um sich nur mit Passkeys anzumelden, <a href="/account/passkeys">fügen Sie zuerst einen Passkey hinzu</a>.`,
  turnPasswordSignInOff: 'Anmeldung mit Passwort ausschalten',
  turnPasswordSignInOn: 'Anmeldung mit Passwort einschalten',
  passwordSignInOnAgain: 'Die Anmeldung mit Passwort ist wieder eingeschaltet.',
  passwordSignInOffNow:
    'Die Anmeldung mit Passwort ist ausgeschaltet. Melden Sie sich mit Ihren Passkeys an.',
  currentPasswordWrong: 'Das aktuelle Passwort ist nicht richtig.',
  passwordTooShort: 'Das neue Passwort muss mindestens 8 Zeichen haben.',
  passwordTooLong: 'Das neue Passwort darf höchstens 1024 Zeichen haben.',
  passwordsDiffer: 'Die beiden neuen Passwörter stimmen nicht überein.',
  passwordChanged: 'Passwort geändert',
  passwordChangedMessage:
    'Ihr Passwort wurde geändert. Alle anderen Browser, die bei Ihrem Konto angemeldet waren, sind abgemeldet.',
  appsDisconnected: (count) =>
    `${plural('de', count, { one: 'Eine Anwendung wurde', other: '# Anwendungen wurden' })} getrennt: Jede muss Sie erneut um Erlaubnis bitten.`,
  backToConnectedApps: 'Zurück zu Ihren verbundenen Anwendungen',
  setNewPassword: 'Neues Passwort festlegen',
  setPassword: 'Passwort festlegen',
  resetLinkWorksOnce:
    'Dieser Link funktioniert einmal. Wenn Sie ein Passwort festlegen, werden Sie überall abgemeldet und alle mit Ihrem Konto verbundenen Anwendungen getrennt.',
  passwordSet: 'Passwort festgelegt',
  passwordSetMessage:
    'Ihr neues Passwort ist festgelegt. Sie wurden überall abgemeldet, und alle mit Ihrem Konto verbundenen Anwendungen sind getrennt.',
  signInWithNewPassword: 'Mit Ihrem neuen Passwort anmelden',
  addNewPasskey: 'Neuen Passkey hinzufügen',
  passwordlessReset:
    'Ihr Konto meldet sich nur mit Passkeys an. Fügen Sie auf diesem Gerät einen Passkey hinzu, um wieder hineinzukommen.',
  passkeyNameLabel: 'Name des Passkeys',
  defaultResetPasskeyName: 'Passkey',
  resetPasskeyNameHint: 'Damit Sie Ihre Passkeys unterscheiden können, z. B. „Laptop Arbeit“.',
  resetPasskeyWorksOnce:
    'Dieser Link funktioniert einmal. Wenn Sie den Passkey hinzufügen, werden Sie überall abgemeldet und alle mit Ihrem Konto verbundenen Anwendungen getrennt. Ein Browser ohne Passkeys kann diesen Link nicht verwenden: Öffnen Sie ihn auf einem Gerät, das Passkeys unterstützt.',
  passkeyAddedTitle: 'Passkey hinzugefügt',
  passkeyAddedMessage: (passkey) =>
    `Ihr neuer Passkey ${passkey} ist hinzugefügt, und Ihr Konto bleibt ohne Passwort. Sie wurden überall abgemeldet, und alle mit Ihrem Konto verbundenen Anwendungen sind getrennt.`,
  signInWithPasskey: 'Mit Ihrem Passkey anmelden',
  linkExpired: 'Link abgelaufen',
  linkNoLongerWorks: 'Dieser Link funktioniert nicht mehr',
  resetLinksWorkOnce:
    'Links zum Zurücksetzen des Passworts funktionieren einmal, 30 Minuten lang. Fordern Sie einen neuen an.',
} satisfies Messages
