import { html } from '../html.js'
import type { Messages } from './en.js'
import { plural } from './format.js'

/** 日本語（です・ます調。app はアプリ、sign in はサインイン、passkey はパスキー）。 */
export const ja = {
  languageMenu: '言語',
  brandLinksMenu: 'ヘルプと法的情報',
  contactSupport: 'サポートに問い合わせる',
  helpAndSupport: 'ヘルプとサポート',
  errorCode: (code) => html`エラーコード: <code>${code}</code>`,
  detailsInEnglish: '詳細（英語）:',

  notFoundTitle: 'ページが見つかりません',
  serverErrorTitle: 'こちら側で問題が発生しました',
  requestErrorTitle: 'このリクエストは完了できません',
  notFoundMessage: 'このアドレスにページはありません。',
  serverErrorAdvice:
    'しばらくしてからもう一度お試しください。繰り返し起きる場合は、時間をおいてお試しください。',
  notFoundAdvice: 'アドレスを確認するか、元のアプリに戻ってください。',
  requestErrorAdvice:
    '元のアプリに戻って、最初からやり直してください。繰り返し起きる場合は、そのアプリの開発者にお問い合わせください。',
  tooManyRequestsTitle: 'リクエストが多すぎます',
  tooManyRequestsMessage: 'お使いのネットワークから短時間に多くのリクエストがありました。',
  tooManyRequestsAdvice: (wait) => `${wait}待ってから、前のページに戻ってもう一度お試しください。`,
  tooManySignInAttempts: (wait) =>
    `サインインの試行回数が多すぎます。${wait}待ってから、もう一度お試しください。`,

  problems: {
    formExpired: 'このフォームは有効期限が切れました。ページを再読み込みして、もう一度お試しください。',
    signInFormExpired:
      'サインインフォームの有効期限が切れました。ページを再読み込みして、もう一度お試しください。',
    signOutFormExpired:
      'サインアウトフォームの有効期限が切れました。ページを再読み込みして、もう一度お試しください。',
    resetFormExpired: 'このフォームは有効期限が切れました。リンクをもう一度開いてください。',
    sessionEnded: 'セッションが終了しました。サインインしてから、もう一度お試しください。',
    signInFirst: '先にサインインしてください。',
    signInRequestExpired:
      'このサインインリクエストは有効期限が切れたか、すでに使用されています。アプリに戻って、最初からやり直してください。',
    authorizationGone:
      'この認可リクエストは有効期限が切れたか、すでに回答済みです。アプリに戻って、最初からやり直してください。',
    chooseAllowOrDeny: '「許可」または「拒否」を選んでください。',
    deviceCodeGone:
      'このコードは有効期限が切れたか、すでに使用されています。デバイスで最初からやり直して、新しいコードを取得してください。',
    deviceFormInvalid: 'このフォームは現在のセッションでは無効です。コードをもう一度入力してください。',
    passkeysOff: 'このサーバーではパスキーが無効になっています。',
    noSuchPasskey: 'そのパスキーはありません。',
    passkeyBeforePasswordOff: 'パスワードでのサインインをオフにする前に、パスキーを追加してください。',
    linkNoLongerWorks: 'このリンクはもう使えません。新しいリンクを依頼してください。',
    unexpected: '予期しないエラーが発生しました。',
    unavailable: 'サービスは一時的に利用できません。しばらくしてからお試しください。',
    malformed: 'リクエストの形式が正しくありません。',
  },

  signInTitle: 'サインイン',
  signInHeading: (service) => `${service} にサインイン`,
  toContinueTo: (app) => html`${app} に進むために`,
  signInFailed: 'メールアドレスまたはパスワードが正しくありません',
  passkeySignInFailed:
    'そのパスキーではサインインできませんでした。もう一度試すか、パスワードをお使いください。',
  passkeyNotOnAccount:
    'そのパスキーはここのどのアカウントにも登録されていません（削除された可能性があります）。別のパスキーかパスワードをお使いください。',
  email: 'メールアドレス',
  password: 'パスワード',
  signIn: 'サインイン',
  usePasskey: 'パスキーを使う',
  neverSeesPassword: (service, app) =>
    html`パスワードを確認するのは ${service} です。${app} にパスワードが渡ることはありません。`,
  signedInTitle: 'サインイン済み',
  signedInHeading: 'サインインしています',
  signedInAs: (email) => html`<strong>${email}</strong> としてサインイン中`,
  signedInAsSentence: (email) => html`<strong>${email}</strong> としてサインインしています。`,
  closeThisPage: 'このページを閉じて、元のアプリに戻ってかまいません。',
  seeConnectedApps: 'アカウントに連携しているアプリを見る',
  signOut: 'サインアウト',

  runsOnThisDevice: 'このアプリはお使いのコンピューター上で動作し、このデバイスで応答を受け取ります。',
  nameWithheld:
    'ここで予約されている名前（このサービスの名前、または別のアプリの名前）を名乗ったため、ホスト名で表示しています。',
  verifiedBody: '運営者がこのサービスに登録したアプリです。',
  vouchedBody: (name, host, hostText) =>
    html`このサービスには登録されていません。「${name}」はアプリが自分で名乗っている名前で、${host} がこのアプリを保証しています。${hostText} を知っていて信頼できる場合にのみ続けてください。`,
  unverifiedBody: (name, host) =>
    html`自動的に自己登録したアプリで、運営元はこのサービスで確認されていません。「${name}」はアプリが自分で名乗っている名前です。応答は ${host} に送られます。`,
  unverifiedBodyNoAddress: (name, host) =>
    html`自動的に自己登録したアプリで、運営元はこのサービスで確認されていません。「${name}」はアプリが自分で名乗っている名前です。${host}のため、応答はアプリ自身がこのサービスから受け取ります。`,
  noWebAddress: 'ウェブアドレスなし',
  verifiedLabel: '確認済みのアプリ。',
  vouchedLabel: (host) => `${host} が保証しています。`,
  unverifiedLabel: '未確認のアプリ。',
  standingTags: { verified: '確認済み', vouched: 'ホストが保証', unverified: '未確認' },

  website: 'ウェブサイト',
  privacyPolicy: 'プライバシーポリシー',
  termsOfService: '利用規約',
  linkOfApp: (app) => `（${app}）`,
  opensInNewTab: '（新しいタブで開きます）',
  aboutApp: (app) => `${app} について`,

  scopes: {
    'links:read': '短縮リンク、タグ、統計の閲覧',
    'links:write': '短縮リンクの作成、変更、削除',
    'ecommerce:write': 'EC リンクとコンバージョン計測の管理',
    'products:sync': 'オンラインショップからの商品カタログの同期',
  },
  ifYouAllow: '許可すると、このアプリは次のことができます:',
  ifYouContinue: '続けると、このアプリは次のことができます:',
  allowTitle: (app) => `${app} を許可しますか？`,
  continueTitle: (app) => `${app} に進みますか？`,
  consentHeading: (title) =>
    html`<span class="app-title">${title}</span> があなたのアカウントの使用を求めています`,
  continueHeading: (title) => html`<span class="app-title">${title} に進みますか？</span>`,
  allowedBefore: (app) =>
    html`このアプリは以前に許可済みです。応答はデバイス上で受け取られ、そこでは別のプログラムがこのアプリになりすます可能性があります。たった今 ${app} から始めた場合にのみ続けてください。`,
  onlyThroughServices: '次のサービスを通じてのみ:',
  allowingSendsBack: (app, destination) =>
    html`${app} にパスワードが渡ることはありません。許可すると ${destination} に戻ります。アプリとの連携はアカウントからいつでも解除できます。`,
  continuingSendsBack: (app, destination) =>
    html`${app} にパスワードが渡ることはありません。続けると ${destination} に戻ります。アプリとの連携はアカウントからいつでも解除できます。`,
  allow: '許可',
  deny: '拒否',
  continue: '続ける',
  cancel: 'キャンセル',
  notYou: 'ご本人ではありませんか？',
  switchAccount: 'アカウントを切り替える',

  connectDevice: 'デバイスを接続',
  enterDeviceCode: 'サインインしようとしているデバイスまたはターミナルに表示されたコードを入力してください。',
  code: 'コード',
  onlyYourOwnCode: 'いまご自身で使っているデバイスから得たコードだけを入力してください。',
  wrongDeviceCode: 'そのコードは無効です。デバイスのコードを確認して、もう一度お試しください。',
  tickTheBox: 'このサインインをご自身で始めたことをチェックボックスで確認するか、「拒否」を選んでください。',
  deviceConsentTitle: (app) => `別のデバイスで ${app} を許可しますか？`,
  deviceConsentHeading: (title) =>
    html`<span class="app-title">${title}</span> が別のデバイスであなたのアカウントの使用を求めています`,
  anotherDeviceWarning: html`<strong>このアプリはこのブラウザーではなく、別のデバイスで動作します。</strong> いま使っているデバイスで、ご自身でこのサインインを始めた場合にのみ許可してください。誰かからこのコードやリンクが送られてきた場合は「拒否」を選んでください。許可すると、その人があなたのアカウントにアクセスできるようになります。`,
  startedItMyself: 'いま使っているデバイスで、このサインインを自分で始めました。',
  deviceConnected: 'デバイスを接続しました',
  requestDenied: 'リクエストを拒否しました',
  deviceAllowed: (app) =>
    html`${app} はお使いのデバイスであなたのアカウントを使えるようになりました。このページを閉じて、デバイスに戻ってかまいません。連携はアカウントからいつでも解除できます。`,
  deviceDenied: (app) => html`${app} にはアクセス権が与えられません。このページを閉じてかまいません。`,

  yourAccount: 'あなたのアカウント',
  navApps: '連携中のアプリ',
  navPasskeys: 'パスキー',
  navPassword: 'パスワード',
  navActivity: '最近のアクティビティ',
  connectedAppsTitle: '連携中のアプリ',
  revokedNotice: (app) =>
    html`<strong>${app}</strong> のアクセスを取り消しました。このアプリはもうあなたのアカウントを使えません。`,
  noConnectedApps: 'アカウントに連携しているアプリはありません。',
  connectedAppsIntro:
    '次のアプリには、あなたのアカウントを使う許可があります。取り消しはすぐに反映されます。',
  appConnected: '連携中: いまあなたのアカウントを使えます。',
  appSignedOut:
    'サインアウト済み: いまはアクセス権がありませんが、取り消すまではあなたに確認せずに再びサインインできます（取り消すと許可の記録も消えます）。',
  onAnotherDevice: (host) => html`別のデバイスで動作します。コードで連携しました。ホスト: ${host}。`,
  appCan: 'できること:',
  appThrough: '経由するサービス:',
  firstAuthorized: '最初の許可',
  lastUsed: '最終使用',
  never: 'なし',
  revoke: '取り消す',
  revokeApp: (app) => `${app} を取り消す`,

  recentActivity: '最近のアクティビティ',
  nothingYet: 'まだ何もありません。',
  anApplication: 'アプリ',
  aPasskey: 'パスキー',
  revokeReasons: {
    user_revoked: 'あなたがアクセスを取り消しました',
    client_disabled: 'サービスがアプリを無効にしました',
    operator_revoked: 'サービスがアクセスを取り消しました',
    other: '取り消し',
  },
  eventConsentGranted: (app, scopes) => html`${app} を許可しました${scopes}`,
  eventConsentWidened: (app, scopes) =>
    html`${app} に追加の許可を与えました${scopes ? html`（現在: ${scopes}）` : ''}`,
  eventGrantRevoked: (app, reason) => html`${app} のアクセスが終了しました: ${reason}`,
  eventPasswordChanged: 'パスワードが変更されました',
  eventPasswordReset: 'リセット用リンクでパスワードが設定されました',
  eventPasskeyRegistered: (passkey) => html`パスキー ${passkey} が追加されました`,
  eventPasskeyRenamed: (passkey) => html`パスキーの名前が ${passkey} に変更されました`,
  eventPasskeyRemoved: (passkey) => html`パスキー ${passkey} が削除されました`,
  eventPasskeyReset: (passkey) =>
    html`リセット用リンクでパスキー ${passkey} が追加されました。すべてのブラウザーがサインアウトし、すべてのアプリの連携が解除されました`,
  eventPasswordSignInOff: 'パスワードでのサインインがオフになりました',
  eventPasswordSignInOn: 'パスワードでのサインインがオンになりました',

  passkeys: 'パスキー',
  passkeyAdded: 'パスキーを追加しました。これでサインインできます。',
  passkeyRenamed: 'パスキーの名前を変更しました。',
  passkeyRemoved: 'パスキーを削除しました。このパスキーではもうサインインできません。',
  passkeyConfirmed: 'ありがとうございます。パスキーを追加できるようになりました。',
  noPasskeyYet: 'パスキーはまだありません。',
  added: '追加日時',
  kept: '保存先',
  keptSynced: 'ほかのデバイスと同期',
  keptOnOneDevice: '1 台のデバイスのみ',
  newNameFor: (passkey) => `${passkey} の新しい名前`,
  rename: '名前を変更',
  remove: '削除',
  removePasskey: (passkey) => `${passkey} を削除`,
  addPasskey: 'パスキーを追加',
  passkeyExplained:
    'パスキーを使うと、デバイスの画面ロック（指紋、顔、PIN）でサインインできます。このサイトでしか使えないため、偽のページでは使えません。',
  name: '名前',
  defaultPasskeyName: 'マイパスキー',
  passkeyNameHint: 'パスキーを見分けるための名前です。例: 保存しているデバイス名。',
  confirmItIsYou: 'まず、ご本人であることを確認してください。',
  yourPassword: 'パスワード',
  confirm: '確認',
  confirmWithPasskey: 'パスキーで確認',
  passkeyNotSaved: 'パスキーは保存されませんでした。もう一度試すか、別のデバイスをお使いください。',
  passkeySignInDidNotWork:
    'パスキーでサインインできませんでした。もう一度試すか、パスワードをお使いください。',
  passkeyRegisterFailed:
    'パスキーは追加されませんでした。ブラウザーまたはデバイスが処理を完了しませんでした。もう一度お試しください。',
  passkeyAlreadyRegistered: 'このパスキーはすでに登録されています。',
  passkeyAlreadyRegisteredElsewhere:
    'このパスキーはすでに登録されています。別のデバイスかパスキー プロバイダーをお使いください。',
  confirmFirst: 'まずご本人であることを確認してから、パスキーを追加してください。',
  passkeyNameRule: 'パスキーには 1〜64 文字の名前を付けてください。',
  notConfirmed: 'ご本人であることを確認できませんでした。もう一度お試しください。',

  newPassword: '新しいパスワード',
  atLeast8: '8 文字以上。',
  repeatNewPassword: '新しいパスワード（確認）',
  changePassword: 'パスワードを変更',
  changeYourPassword: 'パスワードの変更',
  currentPassword: '現在のパスワード',
  disconnectAllApps: 'すべてのアプリの連携を解除する',
  disconnectExplained:
    '連携したアプリは、ここで解除しない限りパスワード変更後も使えます。ほかの誰かがアカウントを使った可能性がある場合は解除してください。',
  othersSignedOut: 'アカウントにサインインしているほかのブラウザーはすべてサインアウトされます。',
  signingInWithPassword: 'パスワードでのサインイン',
  passwordSignInIsOn: 'パスワードでもパスキーでもサインインできます。',
  passwordSignInIsOff:
    'パスワードでのサインインはオフです。サインインできるのはパスキーだけで、パスワードのフォームではこのアカウントにサインインできません。',
  addPasskeyFirst: html`パスキーだけでサインインするには、先に<a href="/account/passkeys">パスキーを追加</a>してください。`,
  turnPasswordSignInOff: 'パスワードでのサインインをオフにする',
  turnPasswordSignInOn: 'パスワードでのサインインをオンにする',
  passwordSignInOnAgain: 'パスワードでのサインインを再びオンにしました。',
  passwordSignInOffNow: 'パスワードでのサインインをオフにしました。パスキーでサインインしてください。',
  currentPasswordWrong: '現在のパスワードが正しくありません。',
  passwordTooShort: '新しいパスワードは 8 文字以上にしてください。',
  passwordTooLong: '新しいパスワードは 1024 文字以内にしてください。',
  passwordsDiffer: '2 つの新しいパスワードが一致しません。',
  passwordChanged: 'パスワードを変更しました',
  passwordChangedMessage:
    'パスワードを変更しました。アカウントにサインインしていたほかのブラウザーはすべてサインアウトしました。',
  appsDisconnected: (count) =>
    plural('ja', count, {
      other: '# 件のアプリの連携を解除しました。各アプリは改めて許可を求める必要があります。',
    }),
  backToConnectedApps: '連携中のアプリに戻る',
  setNewPassword: '新しいパスワードを設定',
  setPassword: 'パスワードを設定',
  resetLinkWorksOnce:
    'このリンクは 1 回だけ使えます。パスワードを設定すると、すべての場所でサインアウトし、アカウントに連携しているすべてのアプリの連携が解除されます。',
  passwordSet: 'パスワードを設定しました',
  passwordSetMessage:
    '新しいパスワードを設定しました。すべての場所でサインアウトし、アカウントに連携していたすべてのアプリの連携を解除しました。',
  signInWithNewPassword: '新しいパスワードでサインイン',
  addNewPasskey: '新しいパスキーを追加',
  passwordlessReset:
    'このアカウントはパスキーでのみサインインします。このデバイスでパスキーを追加すると、再びサインインできます。',
  passkeyNameLabel: 'パスキーの名前',
  defaultResetPasskeyName: 'パスキー',
  resetPasskeyNameHint: 'パスキーを見分けるための名前です。例:「仕事用ノート PC」。',
  resetPasskeyWorksOnce:
    'このリンクは 1 回だけ使えます。パスキーを追加すると、すべての場所でサインアウトし、アカウントに連携しているすべてのアプリの連携が解除されます。パスキーに対応していないブラウザーではこのリンクを使えません。対応したデバイスで開いてください。',
  passkeyAddedTitle: 'パスキーを追加しました',
  passkeyAddedMessage: (passkey) =>
    `新しいパスキー ${passkey} を追加しました。アカウントは引き続きパスワードなしで使えます。すべての場所でサインアウトし、アカウントに連携していたすべてのアプリの連携を解除しました。`,
  signInWithPasskey: 'パスキーでサインイン',
  linkExpired: 'リンクの有効期限切れ',
  linkNoLongerWorks: 'このリンクはもう使えません',
  resetLinksWorkOnce:
    'パスワードのリセット用リンクは 30 分間、1 回だけ使えます。新しいリンクを依頼してください。',
} satisfies Messages
