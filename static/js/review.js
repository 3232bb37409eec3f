// Keyboard shortcuts for the review pages: an element with data-shortcut="<key>" is
// clicked when the key is pressed (a <details> opens and focuses its first field; a
// submit button whose form still lacks a required field, such as an override's reason,
// focuses that field instead of posting).
// Inside a field, Ctrl/Cmd+Enter submits its form and Escape leaves the field.
(function () {
  "use strict";

  function isTyping(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function activate(el) {
    if (el.tagName === "DETAILS") {
      el.open = true;
      var field = el.querySelector("textarea, select, input:not([type=hidden])");
      if (field) field.focus();
    } else if (el.disabled) {
      return;
    } else if (el.form && !el.form.checkValidity()) {
      var missing = el.form.querySelector(":invalid");
      if (missing) missing.focus();
    } else {
      el.click();
    }
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target.form) {
      event.preventDefault();
      target.form.requestSubmit();
      return;
    }
    if (isTyping(target)) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.key.length !== 1) return;
    var el = document.querySelector('[data-shortcut="' + CSS.escape(event.key) + '"]');
    if (!el) return;
    event.preventDefault();
    activate(el);
  });
})();
