// The broker login form. Credentials go from the form straight to the MQTT client and
// live only in memory: never in the URL, web storage or the console. The form is a real
// <form> with autocomplete hints so a browser's password manager can offer to fill it.

const $ = (id) => document.getElementById(id);

/**
 * Shows the form (with `error`, one line, when a previous try was refused) and resolves
 * with {username, password} when it is submitted.
 */
export function askCredentials(error = "") {
  const section = $("login");
  const form = $("login-form");
  const user = $("login-username");
  const pass = $("login-password");
  const err = $("login-error");
  const button = $("login-submit");

  err.textContent = error;
  err.hidden = !error;
  pass.value = ""; // a refused password is not offered again
  button.disabled = false;
  section.hidden = false;
  document.body.dataset.login = "required";
  (user.value ? pass : user).focus();

  return new Promise((resolve) => {
    form.addEventListener("submit", function submit(ev) {
      ev.preventDefault(); // no navigation: the credentials must not end up in a URL
      if (!user.value || !pass.value) return;
      form.removeEventListener("submit", submit);
      const credentials = { username: user.value, password: pass.value };
      button.disabled = true;
      err.hidden = true;
      resolve(credentials);
    });
  });
}

/** Hides the form once the broker accepted the credentials. */
export function loginAccepted() {
  $("login").hidden = true;
  $("login-password").value = "";
  document.body.dataset.login = "ok";
}
