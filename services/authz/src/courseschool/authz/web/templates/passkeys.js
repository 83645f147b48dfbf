// Course School: passkeys (WebAuthn). Each form marked data-passkey="create" or "get"
// carries the server's options (JSON, binary fields as base64url) in data-options. The
// form stays hidden unless this browser can use passkeys; on submit, the browser's
// passkey dialog runs, its answer goes into the form's "credential" field as JSON, and
// the form is posted as any other (its CSRF token with it). The server verifies it.
// Without this script, or without WebAuthn, no passkey is offered (the elements marked
// data-passkey-none say so) and nothing else changes.
(function () {
  "use strict";
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return;
  }

  function bytes(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    while (base64.length % 4) {
      base64 += "=";
    }
    var raw = atob(base64);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i += 1) {
      out[i] = raw.charCodeAt(i);
    }
    return out.buffer;
  }

  function text(buffer) {
    if (!buffer) {
      return null;
    }
    var view = new Uint8Array(buffer);
    var raw = "";
    for (var i = 0; i < view.length; i += 1) {
      raw += String.fromCharCode(view[i]);
    }
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function descriptors(list) {
    return (list || []).map(function (d) {
      return { type: d.type, id: bytes(d.id), transports: d.transports };
    });
  }

  function publicKey(kind, options) {
    options.challenge = bytes(options.challenge);
    if (kind === "create") {
      options.user.id = bytes(options.user.id);
      options.excludeCredentials = descriptors(options.excludeCredentials);
    } else {
      options.allowCredentials = descriptors(options.allowCredentials);
    }
    return options;
  }

  function answer(credential) {
    var r = credential.response;
    var response = { clientDataJSON: text(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = text(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = text(r.authenticatorData);
      response.signature = text(r.signature);
      response.userHandle = text(r.userHandle);
    }
    return {
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response: response,
      authenticatorAttachment: credential.authenticatorAttachment || null,
      clientExtensionResults: credential.getClientExtensionResults()
    };
  }

  function say(form, message) {
    var status = form.querySelector(".passkey-status");
    if (status) {
      status.textContent = message;
    }
  }

  document.querySelectorAll("[data-passkey-only]").forEach(function (element) {
    element.hidden = false;
  });
  document.querySelectorAll("[data-passkey-none]").forEach(function (element) {
    element.hidden = true;
  });
  document.querySelectorAll("form[data-passkey]").forEach(function (form) {
    form.hidden = false;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var kind = form.getAttribute("data-passkey");
      var options = publicKey(kind, JSON.parse(form.getAttribute("data-options")));
      var asked = kind === "create"
        ? navigator.credentials.create({ publicKey: options })
        : navigator.credentials.get({ publicKey: options });
      say(form, "Follow your browser's instructions to use your passkey.");
      asked.then(function (credential) {
        form.querySelector("input[name=credential]").value = JSON.stringify(answer(credential));
        form.submit();
      }, function () {
        say(form, "No passkey was used. You can try again.");
      });
    });
  });
})();
