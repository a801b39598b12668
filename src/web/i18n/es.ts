import { html } from '../html.js'
import type { Messages } from './en.js'
import { plural } from './format.js'

/** Español (trato de usted). */
export const es = {
  languageMenu: 'Idioma',
  brandLinksMenu: 'Ayuda e información legal',
  contactSupport: 'Contactar con soporte',
  helpAndSupport: 'Ayuda y soporte',
  errorCode: (code) => html`Código de error: <code>${code}</code>`,
  detailsInEnglish: 'Detalles, en inglés:',

  notFoundTitle: 'Página no encontrada',
  serverErrorTitle: 'Algo salió mal por nuestra parte',
  requestErrorTitle: 'No se puede completar esta solicitud',
  notFoundMessage: 'No hay ninguna página en esta dirección.',
  serverErrorAdvice: 'Vuelva a intentarlo en un momento. Si sigue ocurriendo, inténtelo más tarde.',
  notFoundAdvice: 'Compruebe la dirección o vuelva a la aplicación de la que venía.',
  requestErrorAdvice:
    'Vuelva a la aplicación de la que venía y empiece de nuevo. Si sigue ocurriendo, póngase en contacto con su desarrollador.',
  tooManyRequestsTitle: 'Demasiadas solicitudes',
  tooManyRequestsMessage: 'Su red ha enviado demasiadas solicitudes en poco tiempo.',
  tooManyRequestsAdvice: (wait) => `Espere ${wait}, luego vuelva atrás e inténtelo de nuevo.`,
  tooManySignInAttempts: (wait) =>
    `Demasiados intentos de inicio de sesión. Espere ${wait} e inténtelo de nuevo.`,

  problems: {
    formExpired: 'Este formulario ha caducado. Vuelva a cargar la página e inténtelo de nuevo.',
    signInFormExpired:
      'El formulario de inicio de sesión ha caducado. Vuelva a cargar la página e inténtelo de nuevo.',
    signOutFormExpired:
      'El formulario de cierre de sesión ha caducado. Vuelva a cargar la página e inténtelo de nuevo.',
    resetFormExpired: 'Este formulario ha caducado. Abra el enlace de nuevo.',
    sessionEnded: 'Su sesión ha terminado. Inicie sesión e inténtelo de nuevo.',
    signInFirst: 'Inicie sesión primero.',
    signInRequestExpired:
      'Esta solicitud de inicio de sesión ha caducado o ya se usó. Vuelva a la aplicación y empiece de nuevo.',
    authorizationGone:
      'Esta solicitud de autorización ha caducado o ya se respondió. Vuelva a la aplicación y empiece de nuevo.',
    chooseAllowOrDeny: 'Elija «Permitir» o «Denegar».',
    deviceCodeGone:
      'Este código ha caducado o ya se usó. Empiece de nuevo en su dispositivo para obtener un código nuevo.',
    deviceFormInvalid: 'Este formulario no es válido para su sesión. Introduzca el código de nuevo.',
    passkeysOff: 'Las llaves de acceso están desactivadas en este servidor.',
    noSuchPasskey: 'Esa llave de acceso no existe.',
    passkeyBeforePasswordOff:
      'Añada una llave de acceso antes de desactivar el inicio de sesión con contraseña.',
    linkNoLongerWorks: 'Este enlace ya no funciona. Pida uno nuevo.',
    unexpected: 'Se produjo un error inesperado.',
    unavailable: 'El servicio no está disponible temporalmente. Inténtelo de nuevo en un momento.',
    malformed: 'La solicitud está mal formada.',
  },

  signInTitle: 'Iniciar sesión',
  signInHeading: (service) => `Iniciar sesión en ${service}`,
  toContinueTo: (app) => html`para continuar en ${app}`,
  signInFailed: 'El correo electrónico o la contraseña no son correctos',
  passkeySignInFailed: 'Esa llave de acceso no inició su sesión. Inténtelo de nuevo o use su contraseña.',
  passkeyNotOnAccount:
    'Esa llave de acceso no pertenece a ninguna cuenta aquí (quizá se eliminó). Use otra llave de acceso o su contraseña.',
  email: 'Correo electrónico',
  password: 'Contraseña',
  signIn: 'Iniciar sesión',
  usePasskey: 'Usar una llave de acceso',
  neverSeesPassword: (service, app) => html`${service} comprueba su contraseña; ${app} nunca la ve.`,
  signedInTitle: 'Sesión iniciada',
  signedInHeading: 'Ha iniciado sesión',
  signedInAs: (email) => html`Sesión iniciada como <strong>${email}</strong>`,
  signedInAsSentence: (email) => html`Sesión iniciada como <strong>${email}</strong>.`,
  closeThisPage: 'Puede cerrar esta página y volver a la aplicación de la que venía.',
  seeConnectedApps: 'Ver las aplicaciones conectadas a su cuenta',
  signOut: 'Cerrar sesión',

  runsOnThisDevice: 'Se ejecuta en su ordenador: recibe la respuesta en este dispositivo.',
  nameWithheld:
    'Se presentó con un nombre reservado aquí (el de este servicio o el de una aplicación que no es), por eso se muestra por su host.',
  verifiedBody: 'Registrada en este servicio por su operador.',
  vouchedBody: (name, host, hostText) =>
    html`No está registrada en este servicio. «${name}» es el nombre que la aplicación se da a sí misma; ${host} responde por ella. Continúe solo si conoce ${hostText} y confía en él.`,
  unverifiedBody: (name, host) =>
    html`Se registró automáticamente y este servicio no ha comprobado quién la gestiona; «${name}» es el nombre que se da a sí misma. Sus respuestas van a ${host}.`,
  unverifiedBodyNoAddress: (name, host) =>
    html`Se registró automáticamente y este servicio no ha comprobado quién la gestiona; «${name}» es el nombre que se da a sí misma. No tiene ${host}: recoge ella misma sus respuestas de este servicio.`,
  noWebAddress: 'ninguna dirección web',
  verifiedLabel: 'Aplicación verificada.',
  vouchedLabel: (host) => `${host} responde por ella.`,
  unverifiedLabel: 'Aplicación no verificada.',
  standingTags: { verified: 'Verificada', vouched: 'Avalada por su host', unverified: 'No verificada' },

  website: 'Sitio web',
  privacyPolicy: 'Política de privacidad',
  termsOfService: 'Condiciones del servicio',
  linkOfApp: (app) => ` de ${app}`,
  opensInNewTab: ' (se abre en una pestaña nueva)',
  aboutApp: (app) => `Acerca de ${app}`,

  scopes: {
    'links:read': 'Leer sus enlaces cortos, etiquetas y estadísticas',
    'links:write': 'Crear, modificar y eliminar sus enlaces cortos',
    'ecommerce:write': 'Gestionar sus enlaces de comercio electrónico y el seguimiento de conversiones',
    'products:sync': 'Sincronizar su catálogo de productos desde una tienda en línea',
  },
  ifYouAllow: 'Si lo permite, podrá:',
  ifYouContinue: 'Si continúa, podrá:',
  allowTitle: (app) => `¿Permitir ${app}?`,
  continueTitle: (app) => `¿Continuar en ${app}?`,
  consentHeading: (title) => html`<span class="app-title">${title}</span> quiere usar su cuenta`,
  continueHeading: (title) => html`¿Continuar en <span class="app-title">${title}?</span>`,
  allowedBefore: (app) =>
    html`Ya permitió esta aplicación antes. Recibe la respuesta en un dispositivo, donde otro programa podría hacerse pasar por ella: continúe solo si acaba de iniciar esto desde ${app}.`,
  onlyThroughServices: 'Solo a través de estos servicios:',
  allowingSendsBack: (app, destination) =>
    html`${app} no verá su contraseña. Al permitirlo volverá a ${destination}. Puede desconectar la aplicación en cualquier momento desde su cuenta.`,
  continuingSendsBack: (app, destination) =>
    html`${app} no verá su contraseña. Al continuar volverá a ${destination}. Puede desconectar la aplicación en cualquier momento desde su cuenta.`,
  allow: 'Permitir',
  deny: 'Denegar',
  continue: 'Continuar',
  cancel: 'Cancelar',
  notYou: '¿No es usted?',
  switchAccount: 'Cambiar de cuenta',

  connectDevice: 'Conectar un dispositivo',
  enterDeviceCode:
    'Introduzca el código que muestra el dispositivo o el terminal desde el que inicia sesión.',
  code: 'Código',
  onlyYourOwnCode:
    'Introduzca solo un código que haya obtenido de un dispositivo que usted mismo esté usando ahora.',
  wrongDeviceCode: 'Ese código no es válido. Compruebe el código en su dispositivo e inténtelo de nuevo.',
  tickTheBox:
    'Marque la casilla para confirmar que inició usted mismo este inicio de sesión, o elija «Denegar».',
  deviceConsentTitle: (app) => `¿Permitir ${app} en otro dispositivo?`,
  deviceConsentHeading: (title) =>
    html`<span class="app-title">${title}</span> quiere usar su cuenta en otro dispositivo`,
  anotherDeviceWarning: html`<strong>Esta aplicación se ejecutará en otro dispositivo, no en este navegador.</strong> Permítala solo si usted mismo inició este inicio de sesión, en un dispositivo que está usando ahora. Si alguien le envió este código o enlace, elija «Denegar»: esa persona obtendría acceso a su cuenta.`,
  startedItMyself: 'Inicié yo mismo este inicio de sesión en un dispositivo que estoy usando ahora.',
  deviceConnected: 'Dispositivo conectado',
  requestDenied: 'Solicitud denegada',
  deviceAllowed: (app) =>
    html`${app} ya puede usar su cuenta en su dispositivo. Puede cerrar esta página y volver a él. Puede desconectarlo en cualquier momento desde su cuenta.`,
  deviceDenied: (app) => html`${app} no obtendrá acceso. Puede cerrar esta página.`,

  yourAccount: 'Su cuenta',
  navApps: 'Aplicaciones conectadas',
  navPasskeys: 'Llaves de acceso',
  navPassword: 'Contraseña',
  navActivity: 'Actividad reciente',
  connectedAppsTitle: 'Aplicaciones conectadas',
  revokedNotice: (app) => html`Ha revocado el acceso de <strong>${app}</strong>. Ya no puede usar su cuenta.`,
  noConnectedApps: 'No hay ninguna aplicación conectada a su cuenta.',
  connectedAppsIntro:
    'Estas aplicaciones tienen su permiso para usar su cuenta. Revocar una tiene efecto inmediato.',
  appConnected: 'Conectada: puede usar su cuenta ahora.',
  appSignedOut:
    'Sesión cerrada: ahora no tiene acceso, pero puede volver a iniciar sesión sin preguntarle hasta que la revoque (revocarla olvida que la permitió).',
  onAnotherDevice: (host) =>
    html`Se ejecuta en otro dispositivo: la conectó con un código. Su host: ${host}.`,
  appCan: 'Puede:',
  appThrough: 'A través de:',
  firstAuthorized: 'Autorizada por primera vez',
  lastUsed: 'Último uso',
  never: 'nunca',
  revoke: 'Revocar',
  revokeApp: (app) => `Revocar ${app}`,

  recentActivity: 'Actividad reciente',
  nothingYet: 'Nada todavía.',
  anApplication: 'una aplicación',
  aPasskey: 'una llave de acceso',
  revokeReasons: {
    user_revoked: 'usted revocó su acceso',
    client_disabled: 'el servicio desactivó la aplicación',
    operator_revoked: 'el servicio revocó su acceso',
    other: 'revocado',
  },
  eventConsentGranted: (app, scopes) => html`Permitió ${app}${scopes}`,
  eventConsentWidened: (app, scopes) => html`Permitió más a ${app}${scopes ? html` (ahora ${scopes})` : ''}`,
  eventGrantRevoked: (app, reason) => html`Terminó el acceso de ${app}: ${reason}`,
  eventPasswordChanged: 'Se cambió su contraseña',
  eventPasswordReset: 'Se estableció su contraseña con un enlace de restablecimiento',
  eventPasskeyRegistered: (passkey) => html`Se añadió la llave de acceso ${passkey}`,
  eventPasskeyRenamed: (passkey) => html`Se cambió el nombre de una llave de acceso a ${passkey}`,
  eventPasskeyRemoved: (passkey) => html`Se eliminó la llave de acceso ${passkey}`,
  eventPasskeyReset: (passkey) =>
    html`Un enlace de restablecimiento añadió la llave de acceso ${passkey}; se cerró la sesión en todos los navegadores y se desconectaron todas las aplicaciones`,
  eventPasswordSignInOff: 'Se desactivó el inicio de sesión con contraseña',
  eventPasswordSignInOn: 'Se activó el inicio de sesión con contraseña',

  passkeys: 'Llaves de acceso',
  passkeyAdded: 'Se añadió su llave de acceso. Ya puede iniciar sesión con ella.',
  passkeyRenamed: 'Se cambió el nombre de su llave de acceso.',
  passkeyRemoved: 'Se eliminó su llave de acceso. Ya no inicia su sesión.',
  passkeyConfirmed: 'Gracias. Ya puede añadir una llave de acceso.',
  noPasskeyYet: 'Todavía no tiene ninguna llave de acceso.',
  added: 'Añadida',
  kept: 'Guardada',
  keptSynced: 'sincronizada con sus otros dispositivos',
  keptOnOneDevice: 'en un solo dispositivo',
  newNameFor: (passkey) => `Nuevo nombre para ${passkey}`,
  rename: 'Cambiar nombre',
  remove: 'Eliminar',
  removePasskey: (passkey) => `Eliminar ${passkey}`,
  addPasskey: 'Añadir una llave de acceso',
  passkeyExplained:
    'Una llave de acceso inicia su sesión con el bloqueo de pantalla de su dispositivo (huella, rostro o PIN). Solo funciona en este sitio, así que una página falsa no puede usarla.',
  name: 'Nombre',
  defaultPasskeyName: 'Mi llave de acceso',
  passkeyNameHint: 'Para distinguir sus llaves de acceso, por ejemplo el dispositivo en que está.',
  confirmItIsYou: 'Primero confirme que es usted.',
  yourPassword: 'Su contraseña',
  confirm: 'Confirmar',
  confirmWithPasskey: 'Confirmar con una llave de acceso',
  passkeyNotSaved: 'No se guardó ninguna llave de acceso. Inténtelo de nuevo o use otro dispositivo.',
  passkeySignInDidNotWork:
    'El inicio de sesión con llave de acceso no funcionó. Inténtelo de nuevo o use su contraseña.',
  passkeyRegisterFailed:
    'No se añadió ninguna llave de acceso: el navegador o el dispositivo no terminó el proceso. Inténtelo de nuevo.',
  passkeyAlreadyRegistered: 'Esta llave de acceso ya está registrada.',
  passkeyAlreadyRegisteredElsewhere:
    'Esta llave de acceso ya está registrada. Use otro dispositivo u otro gestor de llaves de acceso.',
  confirmFirst: 'Primero confirme que es usted y después añada la llave de acceso.',
  passkeyNameRule: 'Dé a la llave de acceso un nombre de 1 a 64 caracteres.',
  notConfirmed: 'Eso no confirmó que sea usted. Inténtelo de nuevo.',

  newPassword: 'Contraseña nueva',
  atLeast8: 'Al menos 8 caracteres.',
  repeatNewPassword: 'Repita la contraseña nueva',
  changePassword: 'Cambiar la contraseña',
  changeYourPassword: 'Cambie su contraseña',
  currentPassword: 'Contraseña actual',
  disconnectAllApps: 'Desconectar todas las aplicaciones',
  disconnectExplained:
    'Las aplicaciones que conectó siguen funcionando tras un cambio de contraseña, salvo que las desconecte aquí; hágalo si otra persona ha podido usar su cuenta.',
  othersSignedOut: 'Se cierra la sesión en todos los demás navegadores conectados a su cuenta.',
  signingInWithPassword: 'Inicio de sesión con su contraseña',
  passwordSignInIsOn: 'Su contraseña inicia su sesión, igual que sus llaves de acceso.',
  passwordSignInIsOff:
    'El inicio de sesión con contraseña está desactivado: solo sus llaves de acceso inician su sesión. El formulario de contraseña rechaza su cuenta.',
  addPasskeyFirst: html`Para iniciar sesión solo con llaves de acceso, <a href="/account/passkeys">añada primero una llave de acceso</a>.`,
  turnPasswordSignInOff: 'Desactivar el inicio de sesión con contraseña',
  turnPasswordSignInOn: 'Activar el inicio de sesión con contraseña',
  passwordSignInOnAgain: 'El inicio de sesión con contraseña vuelve a estar activado.',
  passwordSignInOffNow:
    'El inicio de sesión con contraseña está desactivado. Inicie sesión con sus llaves de acceso.',
  currentPasswordWrong: 'La contraseña actual no es correcta.',
  passwordTooShort: 'La contraseña nueva debe tener al menos 8 caracteres.',
  passwordTooLong: 'La contraseña nueva debe tener como máximo 1024 caracteres.',
  passwordsDiffer: 'Las dos contraseñas nuevas no coinciden.',
  passwordChanged: 'Contraseña cambiada',
  passwordChangedMessage:
    'Se ha cambiado su contraseña. Se ha cerrado la sesión en todos los demás navegadores conectados a su cuenta.',
  appsDisconnected: (count) =>
    plural('es', count, {
      one: 'Se desconectó # aplicación: tendrá que volver a pedirle permiso.',
      other: 'Se desconectaron # aplicaciones: cada una tendrá que volver a pedirle permiso.',
    }),
  backToConnectedApps: 'Volver a sus aplicaciones conectadas',
  setNewPassword: 'Establecer una contraseña nueva',
  setPassword: 'Establecer contraseña',
  resetLinkWorksOnce:
    'Este enlace funciona una sola vez. Establecer una contraseña cierra su sesión en todas partes y desconecta todas las aplicaciones conectadas a su cuenta.',
  passwordSet: 'Contraseña establecida',
  passwordSetMessage:
    'Su contraseña nueva está establecida. Se ha cerrado su sesión en todas partes y se han desconectado todas las aplicaciones conectadas a su cuenta.',
  signInWithNewPassword: 'Iniciar sesión con su contraseña nueva',
  addNewPasskey: 'Añadir una llave de acceso nueva',
  passwordlessReset:
    'Su cuenta inicia sesión solo con llaves de acceso. Añada una llave de acceso en este dispositivo para volver a entrar.',
  passkeyNameLabel: 'Nombre de la llave de acceso',
  defaultResetPasskeyName: 'Llave de acceso',
  resetPasskeyNameHint: 'Para distinguir sus llaves de acceso, por ejemplo «Portátil del trabajo».',
  resetPasskeyWorksOnce:
    'Este enlace funciona una sola vez. Añadir la llave de acceso cierra su sesión en todas partes y desconecta todas las aplicaciones conectadas a su cuenta. Un navegador sin llaves de acceso no puede usar este enlace: ábralo en un dispositivo que las admita.',
  passkeyAddedTitle: 'Llave de acceso añadida',
  passkeyAddedMessage: (passkey) =>
    `Se añadió su nueva llave de acceso ${passkey} y su cuenta sigue sin contraseña. Se ha cerrado su sesión en todas partes y se han desconectado todas las aplicaciones conectadas a su cuenta.`,
  signInWithPasskey: 'Iniciar sesión con su llave de acceso',
  linkExpired: 'Enlace caducado',
  linkNoLongerWorks: 'Este enlace ya no funciona',
  resetLinksWorkOnce:
    'Los enlaces para restablecer la contraseña funcionan una sola vez, durante 30 minutos. Pida uno nuevo.',
} satisfies Messages
