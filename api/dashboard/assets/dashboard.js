// Progressive enhancement only: every page works without this file.
// Copy buttons: shown when the clipboard can be written, they copy the
// value of the input they name and say so.
(function () {
  "use strict";
  function copy(input) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(input.value);
    }
    input.select();
    return document.execCommand("copy") ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      var input = document.getElementById(button.getAttribute("data-copy"));
      if (!input) {
        return;
      }
      button.hidden = false;
      button.addEventListener("click", function () {
        copy(input).then(function () {
          button.textContent = "Copied";
          button.classList.add("done");
        }, function () {
          input.select();
          button.textContent = "Press Ctrl+C to copy";
        });
      });
    });
    // A key shown once is easiest to take whole.
    document.querySelectorAll("input[readonly]").forEach(function (input) {
      input.addEventListener("focus", function () { input.select(); });
    });
  });
})();
