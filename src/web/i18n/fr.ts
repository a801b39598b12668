import { html } from '../html.js'
import type { Messages } from './en.js'
import { plural } from './format.js'

/** Français (vouvoiement). */
export const fr = {
  languageMenu: 'Langue',
  brandLinksMenu: 'Aide et mentions légales',
  contactSupport: 'Contacter l’assistance',
  helpAndSupport: 'Aide et assistance',
  errorCode: (code) => html`Code d’erreur : <code>${code}</code>`,
  detailsInEnglish: 'Détails, en anglais :',

  notFoundTitle: 'Page introuvable',
  serverErrorTitle: 'Un problème est survenu de notre côté',
  requestErrorTitle: 'Cette demande ne peut pas aboutir',
  notFoundMessage: 'Il n’y a aucune page à cette adresse.',
  serverErrorAdvice: 'Veuillez réessayer dans un instant. Si le problème persiste, réessayez plus tard.',
  notFoundAdvice: 'Vérifiez l’adresse, ou revenez à l’application d’où vous venez.',
  requestErrorAdvice:
    'Revenez à l’application d’où vous venez et recommencez. Si cela se reproduit, contactez son développeur.',
  tooManyRequestsTitle: 'Trop de requêtes',
  tooManyRequestsMessage: 'Votre réseau a envoyé trop de requêtes en peu de temps.',
  tooManyRequestsAdvice: (wait) => `Attendez ${wait}, puis revenez en arrière et réessayez.`,
  tooManySignInAttempts: (wait) => `Trop de tentatives de connexion. Attendez ${wait} et réessayez.`,

  problems: {
    formExpired: 'Ce formulaire a expiré. Rechargez la page et réessayez.',
    signInFormExpired: 'Le formulaire de connexion a expiré. Rechargez la page et réessayez.',
    signOutFormExpired: 'Le formulaire de déconnexion a expiré. Rechargez la page et réessayez.',
    resetFormExpired: 'Ce formulaire a expiré. Ouvrez à nouveau le lien.',
    sessionEnded: 'Votre session a pris fin. Connectez-vous et réessayez.',
    signInFirst: 'Connectez-vous d’abord.',
    signInRequestExpired:
      'Cette demande de connexion a expiré ou a déjà été utilisée. Revenez à l’application et recommencez.',
    authorizationGone:
      'Cette demande d’autorisation a expiré ou a déjà reçu une réponse. Revenez à l’application et recommencez.',
    chooseAllowOrDeny: 'Choisissez « Autoriser » ou « Refuser ».',
    deviceCodeGone:
      'Ce code a expiré ou a déjà été utilisé. Recommencez sur votre appareil pour obtenir un nouveau code.',
    deviceFormInvalid: 'Ce formulaire n’est pas valable pour votre session. Saisissez à nouveau le code.',
    passkeysOff: 'Les clés d’accès sont désactivées sur ce serveur.',
    noSuchPasskey: 'Cette clé d’accès n’existe pas.',
    passkeyBeforePasswordOff: 'Ajoutez une clé d’accès avant de désactiver la connexion par mot de passe.',
    linkNoLongerWorks: 'Ce lien ne fonctionne plus. Demandez-en un nouveau.',
    unexpected: 'Une erreur inattendue s’est produite.',
    unavailable: 'Le service est momentanément indisponible. Réessayez dans un instant.',
    malformed: 'La requête est mal formée.',
  },

  signInTitle: 'Connexion',
  signInHeading: (service) => `Se connecter à ${service}`,
  toContinueTo: (app) => html`pour continuer vers ${app}`,
  signInFailed: 'L’adresse e-mail ou le mot de passe est incorrect',
  passkeySignInFailed: 'Cette clé d’accès ne vous a pas connecté. Réessayez, ou utilisez votre mot de passe.',
  passkeyNotOnAccount:
    'Cette clé d’accès n’appartient à aucun compte ici (elle a peut-être été supprimée). Utilisez une autre clé d’accès, ou votre mot de passe.',
  email: 'Adresse e-mail',
  password: 'Mot de passe',
  signIn: 'Se connecter',
  usePasskey: 'Utiliser une clé d’accès',
  neverSeesPassword: (service, app) =>
    html`${service} vérifie votre mot de passe ; ${app} ne le voit jamais.`,
  signedInTitle: 'Connecté',
  signedInHeading: 'Vous êtes connecté',
  signedInAs: (email) => html`Connecté en tant que <strong>${email}</strong>`,
  signedInAsSentence: (email) => html`Connecté en tant que <strong>${email}</strong>.`,
  closeThisPage: 'Vous pouvez fermer cette page et revenir à l’application d’où vous venez.',
  seeConnectedApps: 'Voir les applications connectées à votre compte',
  signOut: 'Se déconnecter',

  runsOnThisDevice: 'Elle s’exécute sur votre ordinateur : elle reçoit la réponse sur cet appareil.',
  nameWithheld:
    'Elle s’est présentée sous un nom réservé ici (celui de ce service, ou celui d’une application qu’elle n’est pas) ; elle est donc affichée sous le nom de son hôte.',
  verifiedBody: 'Enregistrée auprès de ce service par son exploitant.',
  vouchedBody: (name, host, hostText) =>
    html`Non enregistrée auprès de ce service. « ${name} » est le nom que l’application se donne ; ${host} se porte garant d’elle. Ne continuez que si vous connaissez ${hostText} et lui faites confiance.`,
  unverifiedBody: (name, host) =>
    html`Elle s’est enregistrée automatiquement et ce service n’a pas vérifié qui l’exploite ; « ${name} » est le nom qu’elle se donne. Ses réponses sont envoyées à ${host}.`,
  unverifiedBodyNoAddress: (name, host) =>
    html`Elle s’est enregistrée automatiquement et ce service n’a pas vérifié qui l’exploite ; « ${name} » est le nom qu’elle se donne. Elle n’a ${host} : elle vient chercher ses réponses elle-même auprès de ce service.`,
  noWebAddress: 'aucune adresse web',
  verifiedLabel: 'Application vérifiée.',
  vouchedLabel: (host) => `${host} s’en porte garant.`,
  unverifiedLabel: 'Application non vérifiée.',
  standingTags: { verified: 'Vérifiée', vouched: 'Garantie par son hôte', unverified: 'Non vérifiée' },

  website: 'Site web',
  privacyPolicy: 'Politique de confidentialité',
  termsOfService: 'Conditions d’utilisation',
  linkOfApp: (app) => ` de ${app}`,
  opensInNewTab: ' (s’ouvre dans un nouvel onglet)',
  aboutApp: (app) => `À propos de ${app}`,

  scopes: {
    'links:read': 'Lire vos liens courts, vos étiquettes et vos statistiques',
    'links:write': 'Créer, modifier et supprimer vos liens courts',
    'ecommerce:write': 'Gérer vos liens e-commerce et le suivi des conversions',
    'products:sync': 'Synchroniser votre catalogue de produits depuis une boutique en ligne',
  },
  ifYouAllow: 'Si vous l’autorisez, elle pourra :',
  ifYouContinue: 'Si vous continuez, elle pourra :',
  allowTitle: (app) => `Autoriser ${app} ?`,
  continueTitle: (app) => `Continuer vers ${app} ?`,
  consentHeading: (title) => html`<span class="app-title">${title}</span> souhaite utiliser votre compte`,
  continueHeading: (title) => html`Continuer vers <span class="app-title">${title} ?</span>`,
  allowedBefore: (app) =>
    html`Vous avez déjà autorisé cette application. Elle reçoit la réponse sur un appareil, où un autre programme pourrait se faire passer pour elle : ne continuez que si vous venez de lancer cette démarche depuis ${app}.`,
  onlyThroughServices: 'Uniquement par ces services :',
  allowingSendsBack: (app, destination) =>
    html`${app} ne verra pas votre mot de passe. « Autoriser » vous renvoie vers ${destination}. Vous pouvez déconnecter l’application à tout moment depuis votre compte.`,
  continuingSendsBack: (app, destination) =>
    html`${app} ne verra pas votre mot de passe. « Continuer » vous renvoie vers ${destination}. Vous pouvez déconnecter l’application à tout moment depuis votre compte.`,
  allow: 'Autoriser',
  deny: 'Refuser',
  continue: 'Continuer',
  cancel: 'Annuler',
  notYou: 'Ce n’est pas vous ?',
  switchAccount: 'Changer de compte',

  connectDevice: 'Connecter un appareil',
  enterDeviceCode:
    'Saisissez le code affiché sur l’appareil ou dans le terminal depuis lequel vous vous connectez.',
  code: 'Code',
  onlyYourOwnCode: 'Ne saisissez qu’un code obtenu sur un appareil que vous utilisez vous-même en ce moment.',
  wrongDeviceCode: 'Ce code n’est pas valable. Vérifiez le code sur votre appareil et réessayez.',
  tickTheBox:
    'Cochez la case pour confirmer que vous avez lancé cette connexion vous-même, ou choisissez « Refuser ».',
  deviceConsentTitle: (app) => `Autoriser ${app} sur un autre appareil ?`,
  deviceConsentHeading: (title) =>
    html`<span class="app-title">${title}</span> souhaite utiliser votre compte sur un autre appareil`,
  anotherDeviceWarning: html`<strong>Cette application s’exécutera sur un autre appareil, pas dans ce navigateur.</strong> Ne l’autorisez que si vous avez lancé cette connexion vous-même, sur un appareil que vous utilisez en ce moment. Si quelqu’un vous a envoyé ce code ou ce lien, choisissez « Refuser » : cette personne obtiendrait l’accès à votre compte.`,
  startedItMyself: 'J’ai lancé cette connexion moi-même, sur un appareil que j’utilise en ce moment.',
  deviceConnected: 'Appareil connecté',
  requestDenied: 'Demande refusée',
  deviceAllowed: (app) =>
    html`${app} peut désormais utiliser votre compte sur votre appareil. Vous pouvez fermer cette page et y retourner. Vous pouvez le déconnecter à tout moment depuis votre compte.`,
  deviceDenied: (app) => html`${app} n’obtiendra pas l’accès. Vous pouvez fermer cette page.`,

  yourAccount: 'Votre compte',
  navApps: 'Applications connectées',
  navPasskeys: 'Clés d’accès',
  navPassword: 'Mot de passe',
  navActivity: 'Activité récente',
  connectedAppsTitle: 'Applications connectées',
  revokedNotice: (app) =>
    html`Vous avez retiré l’accès de <strong>${app}</strong>. Elle ne peut plus utiliser votre compte.`,
  noConnectedApps: 'Aucune application n’est connectée à votre compte.',
  connectedAppsIntro:
    'Ces applications ont votre permission d’utiliser votre compte. Une révocation prend effet immédiatement.',
  appConnected: 'Connectée : elle peut utiliser votre compte maintenant.',
  appSignedOut:
    'Déconnectée : elle n’a aucun accès pour l’instant, mais elle peut se reconnecter sans vous le demander tant que vous ne la révoquez pas (la révocation oublie votre autorisation).',
  onAnotherDevice: (host) =>
    html`S’exécute sur un autre appareil : vous l’avez connectée avec un code. Son hôte : ${host}.`,
  appCan: 'Peut :',
  appThrough: 'Par :',
  firstAuthorized: 'Autorisée le',
  lastUsed: 'Dernière utilisation',
  never: 'jamais',
  revoke: 'Révoquer',
  revokeApp: (app) => `Révoquer ${app}`,

  recentActivity: 'Activité récente',
  nothingYet: 'Rien pour l’instant.',
  anApplication: 'une application',
  aPasskey: 'une clé d’accès',
  revokeReasons: {
    user_revoked: 'vous avez révoqué son accès',
    client_disabled: 'le service a désactivé l’application',
    operator_revoked: 'le service a révoqué son accès',
    other: 'révoqué',
  },
  eventConsentGranted: (app, scopes) => html`Vous avez autorisé ${app}${scopes}`,
  eventConsentWidened: (app, scopes) =>
    html`Vous avez accordé davantage à ${app}${scopes ? html` (désormais ${scopes})` : ''}`,
  eventGrantRevoked: (app, reason) => html`Fin de l’accès de ${app} : ${reason}`,
  eventPasswordChanged: 'Votre mot de passe a été modifié',
  eventPasswordReset: 'Votre mot de passe a été défini avec un lien de réinitialisation',
  eventPasskeyRegistered: (passkey) => html`La clé d’accès ${passkey} a été ajoutée`,
  eventPasskeyRenamed: (passkey) => html`Une clé d’accès a été renommée en ${passkey}`,
  eventPasskeyRemoved: (passkey) => html`La clé d’accès ${passkey} a été supprimée`,
  eventPasskeyReset: (passkey) =>
    html`Un lien de réinitialisation a ajouté la clé d’accès ${passkey} ; tous les navigateurs ont été déconnectés et toutes les applications déconnectées`,
  eventPasswordSignInOff: 'La connexion par mot de passe a été désactivée',
  eventPasswordSignInOn: 'La connexion par mot de passe a été activée',

  passkeys: 'Clés d’accès',
  passkeyAdded: 'Votre clé d’accès a été ajoutée. Vous pouvez maintenant vous connecter avec elle.',
  passkeyRenamed: 'Votre clé d’accès a été renommée.',
  passkeyRemoved: 'Votre clé d’accès a été supprimée. Elle ne vous connecte plus.',
  passkeyConfirmed: 'Merci. Vous pouvez maintenant ajouter une clé d’accès.',
  noPasskeyYet: 'Vous n’avez pas encore de clé d’accès.',
  added: 'Ajoutée le',
  kept: 'Conservée',
  keptSynced: 'synchronisée avec vos autres appareils',
  keptOnOneDevice: 'sur un seul appareil',
  newNameFor: (passkey) => `Nouveau nom pour ${passkey}`,
  rename: 'Renommer',
  remove: 'Supprimer',
  removePasskey: (passkey) => `Supprimer ${passkey}`,
  addPasskey: 'Ajouter une clé d’accès',
  passkeyExplained:
    'Une clé d’accès vous connecte avec le verrouillage d’écran de votre appareil (empreinte, visage ou code PIN). Elle ne fonctionne que sur ce site : une page imitée ne peut pas l’utiliser.',
  name: 'Nom',
  defaultPasskeyName: 'Ma clé d’accès',
  passkeyNameHint: 'Pour distinguer vos clés d’accès, par exemple l’appareil où elle se trouve.',
  confirmItIsYou: 'Confirmez d’abord que c’est bien vous.',
  yourPassword: 'Votre mot de passe',
  confirm: 'Confirmer',
  confirmWithPasskey: 'Confirmer avec une clé d’accès',
  passkeyNotSaved: 'Aucune clé d’accès n’a été enregistrée. Réessayez, ou utilisez un autre appareil.',
  passkeySignInDidNotWork:
    'La connexion avec une clé d’accès n’a pas fonctionné. Réessayez, ou utilisez votre mot de passe.',
  passkeyRegisterFailed:
    'Aucune clé d’accès n’a été ajoutée : le navigateur ou l’appareil n’a pas terminé l’opération. Réessayez.',
  passkeyAlreadyRegistered: 'Cette clé d’accès est déjà enregistrée.',
  passkeyAlreadyRegisteredElsewhere:
    'Cette clé d’accès est déjà enregistrée. Utilisez un autre appareil ou un autre gestionnaire de clés d’accès.',
  confirmFirst: 'Confirmez d’abord que c’est bien vous, puis ajoutez la clé d’accès.',
  passkeyNameRule: 'Donnez à la clé d’accès un nom de 1 à 64 caractères.',
  notConfirmed: 'Cela n’a pas confirmé que c’est bien vous. Réessayez.',

  newPassword: 'Nouveau mot de passe',
  atLeast8: 'Au moins 8 caractères.',
  repeatNewPassword: 'Répétez le nouveau mot de passe',
  changePassword: 'Changer de mot de passe',
  changeYourPassword: 'Changer votre mot de passe',
  currentPassword: 'Mot de passe actuel',
  disconnectAllApps: 'Déconnecter toutes les applications',
  disconnectExplained:
    'Les applications connectées continuent de fonctionner après un changement de mot de passe, sauf si vous les déconnectez ici ; faites-le si quelqu’un d’autre a pu utiliser votre compte.',
  othersSignedOut: 'Tous les autres navigateurs connectés à votre compte sont déconnectés.',
  signingInWithPassword: 'Connexion avec votre mot de passe',
  passwordSignInIsOn: 'Votre mot de passe vous connecte, tout comme vos clés d’accès.',
  passwordSignInIsOff:
    'La connexion par mot de passe est désactivée : seules vos clés d’accès vous connectent. Le formulaire de mot de passe refuse votre compte.',
  addPasskeyFirst: html`Pour vous connecter uniquement avec des clés d’accès, <a href="/account/passkeys">ajoutez d’abord une clé d’accès</a>.`,
  turnPasswordSignInOff: 'Désactiver la connexion par mot de passe',
  turnPasswordSignInOn: 'Activer la connexion par mot de passe',
  passwordSignInOnAgain: 'La connexion par mot de passe est de nouveau activée.',
  passwordSignInOffNow: 'La connexion par mot de passe est désactivée. Connectez-vous avec vos clés d’accès.',
  currentPasswordWrong: 'Le mot de passe actuel est incorrect.',
  passwordTooShort: 'Le nouveau mot de passe doit comporter au moins 8 caractères.',
  passwordTooLong: 'Le nouveau mot de passe doit comporter au plus 1024 caractères.',
  passwordsDiffer: 'Les deux nouveaux mots de passe ne sont pas identiques.',
  passwordChanged: 'Mot de passe modifié',
  passwordChangedMessage:
    'Votre mot de passe a été modifié. Tous les autres navigateurs connectés à votre compte sont déconnectés.',
  appsDisconnected: (count) =>
    plural('fr', count, {
      one: '# application a été déconnectée : elle devra vous redemander votre autorisation.',
      other: '# applications ont été déconnectées : chacune devra vous redemander votre autorisation.',
    }),
  backToConnectedApps: 'Retour à vos applications connectées',
  setNewPassword: 'Définir un nouveau mot de passe',
  setPassword: 'Définir le mot de passe',
  resetLinkWorksOnce:
    'Ce lien ne fonctionne qu’une fois. Définir un mot de passe vous déconnecte partout et déconnecte toutes les applications connectées à votre compte.',
  passwordSet: 'Mot de passe défini',
  passwordSetMessage:
    'Votre nouveau mot de passe est défini. Vous avez été déconnecté partout, et toutes les applications connectées à votre compte sont déconnectées.',
  signInWithNewPassword: 'Se connecter avec votre nouveau mot de passe',
  addNewPasskey: 'Ajouter une nouvelle clé d’accès',
  passwordlessReset:
    'Votre compte se connecte uniquement avec des clés d’accès. Ajoutez une clé d’accès sur cet appareil pour y accéder à nouveau.',
  passkeyNameLabel: 'Nom de la clé d’accès',
  defaultResetPasskeyName: 'Clé d’accès',
  resetPasskeyNameHint: 'Pour distinguer vos clés d’accès, par exemple « Portable du bureau ».',
  resetPasskeyWorksOnce:
    'Ce lien ne fonctionne qu’une fois. Ajouter la clé d’accès vous déconnecte partout et déconnecte toutes les applications connectées à votre compte. Un navigateur sans clés d’accès ne peut pas utiliser ce lien : ouvrez-le sur un appareil qui les prend en charge.',
  passkeyAddedTitle: 'Clé d’accès ajoutée',
  passkeyAddedMessage: (passkey) =>
    `Votre nouvelle clé d’accès ${passkey} est ajoutée et votre compte reste sans mot de passe. Vous avez été déconnecté partout, et toutes les applications connectées à votre compte sont déconnectées.`,
  signInWithPasskey: 'Se connecter avec votre clé d’accès',
  linkExpired: 'Lien expiré',
  linkNoLongerWorks: 'Ce lien ne fonctionne plus',
  resetLinksWorkOnce:
    'Les liens de réinitialisation du mot de passe ne fonctionnent qu’une fois, pendant 30 minutes. Demandez-en un nouveau.',
} satisfies Messages
