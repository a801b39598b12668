/**
 * The one script of ours, served at /static/passkeys.js (the CSP of the pages that use it allows
 * script-src 'self', never inline code). It is the browser's half of the WebAuthn ceremonies: it
 * asks our server for options, calls navigator.credentials, and posts the credential's JSON back in
 * an ordinary form, so the server answers with a page or a redirect as for the password form.
 *
 * Forms opt in with data-passkey="sign-in" | "register" | "reauthenticate" | "reset" and
 * data-options (the URL of their options); a [data-passkey-only] element inside is shown only where
 * passkeys work; data-passkey-autofill starts a conditional (autofill) request at once, and
 * data-passkey-unknown (with data-passkey-rp-id) names a refused credential the browser may forget.
 * Without JavaScript or WebAuthn the page keeps its password form.
 */
export const PASSKEYS_SCRIPT = `'use strict';
(function () {
  var b64 = {
    decode: function (text) {
      var s = text.replace(/-/g, '+').replace(/_/g, '/');
      while (s.length % 4) s += '=';
      var bin = atob(s), out = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out.buffer;
    },
    encode: function (buffer) {
      var bytes = new Uint8Array(buffer), bin = '';
      for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
      return btoa(bin).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
    },
  };

  function descriptors(list) {
    return (list || []).map(function (c) {
      return { type: 'public-key', id: b64.decode(c.id), transports: c.transports };
    });
  }

  function requestOptions(o) {
    return {
      challenge: b64.decode(o.challenge), rpId: o.rpId, timeout: o.timeout,
      userVerification: o.userVerification, allowCredentials: descriptors(o.allowCredentials),
    };
  }

  function creationOptions(o) {
    return {
      challenge: b64.decode(o.challenge), rp: o.rp,
      user: { id: b64.decode(o.user.id), name: o.user.name, displayName: o.user.displayName },
      pubKeyCredParams: o.pubKeyCredParams, timeout: o.timeout, attestation: o.attestation,
      excludeCredentials: descriptors(o.excludeCredentials), authenticatorSelection: o.authenticatorSelection,
    };
  }

  function credentialJson(c) {
    var r = c.response, response = { clientDataJSON: b64.encode(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = b64.encode(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = b64.encode(r.authenticatorData);
      response.signature = b64.encode(r.signature);
      if (r.userHandle) response.userHandle = b64.encode(r.userHandle);
    }
    return JSON.stringify({
      id: c.id, rawId: b64.encode(c.rawId), type: c.type, response: response,
      authenticatorAttachment: c.authenticatorAttachment || undefined,
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
    });
  }

  function say(form, message) {
    var alert = form.querySelector('[data-passkey-alert]');
    if (!alert) return;
    alert.textContent = message;
    alert.hidden = !message;
  }

  // The page writes its messages in its own language on the alert (data-message-create, -get).
  function message(form, kind) {
    var alert = form.querySelector('[data-passkey-alert]');
    var text = alert && alert.getAttribute('data-message-' + kind);
    if (text) return text;
    return kind === 'create'
      ? 'No passkey was saved. Try again, or use another device.'
      : 'Signing in with a passkey did not work. Try again, or use your password.';
  }

  function options(form) {
    var token = form.querySelector('input[name=csrf_token]');
    var reset = form.querySelector('input[name=token]');
    return fetch(form.getAttribute('data-options'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': token ? token.value : '' },
      body: JSON.stringify(reset ? { token: reset.value } : {}),
    }).then(function (res) {
      if (!res.ok) throw new Error('options ' + res.status);
      return res.json();
    });
  }

  var pending = null;

  function ceremony(form, kind, conditional) {
    if (pending) pending.abort();
    var controller = new AbortController();
    pending = controller;
    say(form, '');
    var create = kind === 'register' || kind === 'reset';
    return options(form)
      .then(function (o) {
        return create
          ? navigator.credentials.create({ publicKey: creationOptions(o), signal: controller.signal })
          : navigator.credentials.get({
              publicKey: requestOptions(o), signal: controller.signal,
              mediation: conditional ? 'conditional' : 'optional',
            });
      })
      .then(function (credential) {
        if (!credential) throw new Error('no credential');
        form.querySelector('input[name=response]').value = credentialJson(credential);
        HTMLFormElement.prototype.submit.call(form);
      })
      .catch(function (err) {
        // Autofill (conditional mediation) was never asked for by the user: its failures stay silent.
        if (controller.signal.aborted || conditional) return;
        say(form, message(form, create ? 'create' : 'get'));
      });
  }

  // The server refused a passkey it does not hold (removed from its account, or never registered
  // here): tell the browser, so that its password manager stops offering it (WebAuthn L3 §5.1.10).
  // Only a hint, where the browser has it; the page never asks for a passkey by itself after a
  // refusal, so a browser that keeps offering this one cannot make the page go round.
  function forgetUnknown(form) {
    var id = form.getAttribute('data-passkey-unknown');
    if (!id || typeof PublicKeyCredential.signalUnknownCredential !== 'function') return;
    PublicKeyCredential.signalUnknownCredential({ rpId: form.getAttribute('data-passkey-rp-id'), credentialId: id })
      .catch(function () {});
  }

  function setUp(form) {
    var kind = form.getAttribute('data-passkey');
    forgetUnknown(form);
    form.querySelectorAll('[data-passkey-only]').forEach(function (el) { el.hidden = false; });
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      ceremony(form, kind, false);
    });
    if (form.hasAttribute('data-passkey-autofill') && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        if (available) ceremony(form, kind, true);
      });
    }
  }

  if (!window.PublicKeyCredential || !navigator.credentials) {
    // Shown from the start where the page must not shift (sign-in): taken away where it cannot work.
    document.querySelectorAll('[data-passkey-shown]').forEach(function (el) { el.hidden = true; });
    return;
  }
  document.querySelectorAll('form[data-passkey]').forEach(setUp);
})();
`
