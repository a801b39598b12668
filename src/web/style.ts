/**
 * The one stylesheet, served by us at /static/style.css (no CDN, no web fonts, no images): light and
 * dark themes follow prefers-color-scheme; nothing loads late, so nothing shifts.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --bg: #f4f6f8; --card: #fff; --text: #1b1f24; --muted: #57606a;
  --border: #d0d7de; --primary: #0b5cd5; --primary-hover: #0a4fb8; --primary-text: #fff;
  --danger: #b42318; --danger-bg: #fef3f2; --accent-bg: #e8f0fe; --ok: #1a7f37; --focus: #0b5cd5;
  --ok-bg: #e9f7ee; --warn: #7a4100; --warn-bg: #fff4dc; --warn-border: #c98a12; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --card: #161b22; --text: #e6edf3; --muted: #9da7b3; --border: #30363d;
    --primary: #4493f8; --primary-hover: #6aa8fa; --primary-text: #0d1117;
    --danger: #f97066; --danger-bg: #2d1517; --accent-bg: #1b2a41; --ok: #3fb950; --focus: #79b8ff;
    --ok-bg: #12261a; --warn: #f2c45a; --warn-bg: #2b2110; --warn-border: #a8770f; }
}
* { box-sizing: border-box; }
html { font-size: 100%; -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header.site { padding: 0.75rem 1rem; border-bottom: 1px solid var(--border); background: var(--card); }
.brand { display: inline-flex; align-items: center; gap: 0.5rem; font-weight: 700; letter-spacing: 0.02em; }
.brand .mark { display: inline-block; width: 1.25rem; height: 1.25rem; border-radius: 0.375rem;
  background: linear-gradient(135deg, var(--primary), var(--ok)); }
main { max-width: 30rem; margin: 2.5rem auto; padding: 0 1rem; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 0.75rem; padding: 1.75rem;
  box-shadow: 0 1px 3px rgb(0 0 0 / 0.06); overflow-wrap: anywhere; }
h1 { font-size: 1.375rem; line-height: 1.3; margin: 0 0 1rem; }
h2 { font-size: 1rem; margin: 1.5rem 0 0.5rem; }
.card > :first-child { margin-top: 0; }
a { color: var(--primary); }
a:hover { color: var(--primary-hover); }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
.small { font-size: 0.875rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.875em; }
label { display: block; font-weight: 600; margin: 0 0 0.25rem; }
input[type=checkbox] { width: 1.125rem; height: 1.125rem; margin: 0; vertical-align: -0.1875rem; }
input[type=checkbox] + label { display: inline; margin: 0; margin-inline-start: 0.5rem; }
input[type=email], input[type=password], input[type=text] { width: 100%; min-height: 2.75rem;
  padding: 0.625rem 0.75rem; font: inherit; color: var(--text); background: var(--bg);
  border: 1px solid var(--border); border-radius: 0.5rem; margin: 0 0 1rem; }
input:focus-visible { border-color: var(--focus); }
button, .button { display: inline-block; min-height: 2.75rem; padding: 0.625rem 1.25rem; font: inherit; font-weight: 600;
  border-radius: 0.5rem; border: 1px solid var(--border); background: var(--card); color: var(--text); cursor: pointer;
  text-decoration: none; text-align: center; }
button:hover, .button:hover { border-color: var(--muted); }
button.primary { background: var(--primary); color: var(--primary-text); border-color: var(--primary); }
button.primary:hover { background: var(--primary-hover); border-color: var(--primary-hover); }
button.danger { color: var(--danger); }
button.small { min-height: 2.25rem; padding: 0.375rem 0.875rem; font-size: 0.875rem; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.actions { display: flex; gap: 0.75rem; flex-wrap: wrap; margin-top: 1.5rem; }
.actions button { flex: 1 1 8rem; }
.alert { border: 1px solid var(--danger); background: var(--danger-bg); color: var(--danger); font-weight: 600;
  border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 0 0 1rem; }
.notice { border: 1px solid var(--border); background: var(--accent-bg); border-radius: 0.5rem;
  padding: 0.75rem 1rem; margin: 0 0 1rem; }
.monogram { display: flex; align-items: center; justify-content: center; width: 3rem; height: 3rem;
  margin: 0 0 1rem; border-radius: 0.75rem; background: var(--accent-bg); color: var(--primary);
  font-size: 1.5rem; font-weight: 800; line-height: 1; }
.app-name { font-weight: 800; }
h1 .app-name { display: block; font-size: 1.5rem; }
h1 .app-title { display: block; font-size: 1.5rem; font-weight: 800; }
h1 .app-title .app-name { display: inline; }
.consent h1 { font-size: 1.125rem; font-weight: 600; }
ul.scopes { list-style: none; padding: 0; margin: 0 0 1.25rem; border: 1px solid var(--border); border-radius: 0.5rem; }
ul.scopes li { position: relative; padding-block: 0.75rem; padding-inline: 2.5rem 1rem; }
ul.scopes li + li { border-top: 1px solid var(--border); }
ul.scopes li::before { content: "✓"; position: absolute; inset-inline-start: 1rem; top: 0.75rem; color: var(--ok); font-weight: 800; }
ul.scopes code { display: block; color: var(--muted); font-size: 0.8125rem; }
ul.connected-apps { list-style: none; padding: 0; margin: 0; }
li.connected-app { border-top: 1px solid var(--border); padding: 1rem 0 0; margin: 1rem 0 0; }
li.connected-app h2 { font-size: 1.125rem; margin: 0 0 0.5rem; }
li.connected-app dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
li.connected-app dt { font-weight: 600; }
li.connected-app dd { margin: 0; }
.switch-account { display: flex; align-items: center; justify-content: space-between; gap: 0.75rem; flex-wrap: wrap;
  border-top: 1px solid var(--border); padding-top: 1rem; margin-top: 1.5rem; }
.switch-account p { margin: 0; }
form + p.small { margin: 1rem 0 0; }
.app-about { margin: 0 0 1.25rem; }
.app-description { margin: 0 0 0.5rem; overflow-wrap: anywhere; }
ul.app-links { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.error { border-top: 4px solid var(--danger); }
.error .code { color: var(--muted); }
main:has(> .account) { max-width: 40rem; }
.account > .card + .card { margin-top: 1.5rem; }
.account-bar { display: flex; align-items: center; justify-content: space-between; gap: 0.75rem; flex-wrap: wrap;
  margin: 1.5rem 0 0; padding-top: 1rem; border-top: 1px solid var(--border); }
.account-bar p { margin: 0; }
.account-nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem; padding: 0; margin: 0 0 1.25rem;
  border-bottom: 1px solid var(--border); }
.account-nav a { display: inline-block; padding: 0.5rem 0.75rem; min-height: 2.75rem; line-height: 1.75rem;
  color: var(--text); text-decoration: none; border-bottom: 3px solid transparent; }
.account-nav a:hover { border-bottom-color: var(--border); }
.account-nav a[aria-current="page"] { border-bottom-color: var(--primary); font-weight: 700; }
li.connected-app form { margin: 0 0 1rem; }
ul.passkeys { list-style: none; padding: 0; margin: 0 0 1rem; }
li.passkey { border-top: 1px solid var(--border); padding: 1rem 0 0; margin: 1rem 0 0; }
li.passkey { display: grid; grid-template-columns: 1fr auto auto; gap: 0 0.5rem; align-items: end; }
li.passkey > h2, li.passkey > dl, li.passkey label { grid-column: 1 / -1; }
li.passkey > form { display: contents; }
li.passkey h2 { font-size: 1.0625rem; margin: 0 0 0.5rem; }
li.passkey input[type=text] { margin: 0; }
li.passkey dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
li.passkey dt { font-weight: 600; }
li.passkey dd { margin: 0; }
.passkey-choice { border-top: 1px solid var(--border); margin-top: 1.5rem; padding-top: 1rem; }
.passkey-choice button { width: 100%; }
.client-host { font-weight: 600; overflow-wrap: anywhere; }
h1 .client-host { display: block; font-size: 1rem; color: var(--muted); }
.standing { display: flex; gap: 0.75rem; align-items: flex-start; border: 1px solid; border-inline-start-width: 6px;
  border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 0 0 1.25rem; }
.standing p { margin: 0; }
.standing-icon { flex: none; display: flex; align-items: center; justify-content: center; width: 1.75rem;
  height: 1.75rem; border-radius: 50%; font-weight: 800; line-height: 1; }
.standing-verified { border-color: var(--ok); background: var(--ok-bg); }
.standing-verified .standing-icon { background: var(--ok); color: var(--card); }
.standing-vouched { border-color: var(--primary); background: var(--accent-bg); }
.standing-vouched .standing-icon { background: var(--primary); color: var(--primary-text); }
.standing-unverified { border-color: var(--warn-border); background: var(--warn-bg); color: var(--warn); }
.standing-unverified .standing-icon { background: var(--warn); color: var(--warn-bg); }
.standing.compact { display: inline-flex; align-items: center; padding: 0.25rem 0.625rem; margin: 0 0 0.5rem; border-inline-start-width: 4px; }
.standing.compact .standing-icon { width: 1.25rem; height: 1.25rem; font-size: 0.8125rem; }
.standing-tag { display: inline-block; border: 1px solid; border-radius: 999px; padding: 0 0.5rem; font-size: 0.8125rem; font-weight: 600; }
.standing-tag-vouched { border-color: var(--primary); background: var(--accent-bg); }
.standing-tag-unverified { border-color: var(--warn-border); background: var(--warn-bg); color: var(--warn); }
.app-state { margin: 0 0 0.75rem; }
.app-state.connected { color: var(--ok); font-weight: 600; }
input.user-code { font-family: ui-monospace, monospace; font-size: 1.25rem; letter-spacing: 0.15em;
  text-transform: uppercase; }
.confirm-own { display: flex; gap: 0.5rem; align-items: flex-start; margin: 1rem 0 0; }
.confirm-own input { width: 1.25rem; height: 1.25rem; margin: 0.15rem 0 0; flex: none; }
.confirm-own label { display: inline; margin: 0; }
ul.account-history { padding-inline-start: 1.25rem; margin: 0; }
footer.site { max-width: 40rem; margin: 0 auto 2rem; padding: 0 1rem; }
ul.languages { list-style: none; display: flex; flex-wrap: wrap; justify-content: center; gap: 0.25rem 0.75rem;
  padding: 0; margin: 0; font-size: 0.875rem; }
ul.languages a { display: inline-block; padding: 0.25rem 0.5rem; min-height: 2rem; color: var(--muted); }
ul.languages a[aria-current] { color: var(--text); font-weight: 700; text-decoration: none; }
ul.account-history li + li { margin-top: 0.5rem; }
@media (max-width: 30rem) { main { margin: 1rem auto; } .card { padding: 1.25rem; }
  .account-nav a { padding: 0.5rem 0.5rem; }
  li.passkey { grid-template-columns: auto auto 1fr; }
  li.passkey input[type=text] { grid-column: 1 / -1; margin: 0 0 0.5rem; } }
`
