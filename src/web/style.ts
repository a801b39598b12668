/** The one stylesheet, served by us at /static/style.css (no CDN). Light and dark themes. */
export const STYLESHEET = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --text: #1b1f24; --muted: #57606a;
  --border: #d0d7de; --primary: #0b5cd5; --primary-text: #fff; --danger: #b42318; --focus: #0b5cd5; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --card: #161b22; --text: #e6edf3; --muted: #9da7b3; --border: #30363d;
    --primary: #4493f8; --primary-text: #0d1117; --danger: #f97066; --focus: #79b8ff; }
}
* { box-sizing: border-box; }
html { font-size: 100%; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header.site { padding: 0.75rem 1rem; border-bottom: 1px solid var(--border); background: var(--card); }
.brand { font-weight: 700; letter-spacing: 0.02em; }
main { max-width: 32rem; margin: 2rem auto; padding: 0 1rem; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 0.75rem; padding: 1.5rem; }
h1 { font-size: 1.375rem; line-height: 1.3; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; }
label { display: block; font-weight: 600; margin: 0 0 0.25rem; }
input[type=email], input[type=password], input[type=text] { width: 100%; padding: 0.625rem 0.75rem; font: inherit;
  color: var(--text); background: var(--bg); border: 1px solid var(--border); border-radius: 0.5rem; margin: 0 0 1rem; }
button, .button { display: inline-block; min-height: 2.75rem; padding: 0.625rem 1.25rem; font: inherit; font-weight: 600;
  border-radius: 0.5rem; border: 1px solid var(--border); background: var(--card); color: var(--text); cursor: pointer;
  text-decoration: none; text-align: center; }
button.primary { background: var(--primary); color: var(--primary-text); border-color: var(--primary); }
button.danger { color: var(--danger); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.actions { display: flex; gap: 0.75rem; flex-wrap: wrap; margin-top: 1.5rem; }
.actions button { flex: 1 1 8rem; }
.alert { border: 1px solid var(--danger); color: var(--danger); border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 0 0 1rem; }
.notice { border: 1px solid var(--border); border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 0 0 1rem; }
ul.scopes { padding-left: 1.25rem; margin: 0 0 1rem; }
ul.scopes li { margin: 0.25rem 0; }
ul.connected-apps { list-style: none; padding: 0; margin: 0; }
li.connected-app { border-top: 1px solid var(--border); padding: 1rem 0 0; margin: 1rem 0 0; }
li.connected-app h2 { font-size: 1.125rem; margin: 0 0 0.5rem; }
li.connected-app dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
li.connected-app dt { font-weight: 600; }
li.connected-app dd { margin: 0; }
.error .code { color: var(--muted); }
h2 { font-size: 1.0625rem; margin: 1.5rem 0 0.5rem; }
.app-name { font-size: 1.25em; font-weight: 800; }
.switch-account { border-top: 1px solid var(--border); padding-top: 1rem; margin-top: 1.5rem; }
@media (max-width: 30rem) { main { margin: 1rem auto; } .card { padding: 1rem; } }
`
